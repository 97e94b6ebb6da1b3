module github.com/sup-project/sup/shims/go

go 1.21
