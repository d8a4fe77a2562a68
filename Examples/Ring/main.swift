import FastMailbox

print("example-ring: work in progress")
