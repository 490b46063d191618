module github.com/ringcp/ringcp

go 1.23.0

require (
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/klauspost/compress v1.18.4
	github.com/spf13/pflag v1.1.0
	golang.org/x/crypto v0.41.0
	golang.org/x/sys v0.35.0
	golang.org/x/time v0.12.0
)
