import FastMailbox

print("example-image-cache: work in progress")
