module fastmailbox/ring-bench-go

go 1.19
