import FastMailbox
print("ring-bench")
