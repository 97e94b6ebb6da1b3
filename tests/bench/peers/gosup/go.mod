module sup/bench/peer-gosup

go 1.21

require github.com/sup-project/sup v0.0.0

replace github.com/sup-project/sup => ../../../..
