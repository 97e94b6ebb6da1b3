module sup/bench/peer

go 1.21
