import FastMailbox

print("example-echo: work in progress")
