import FastMailbox

print("example-readme: work in progress")
