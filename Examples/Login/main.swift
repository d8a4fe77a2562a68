import FastMailbox

print("example-login: work in progress")
