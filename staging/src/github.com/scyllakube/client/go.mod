module github.com/scyllakube/client

go 1.26.0

replace github.com/scyllakube/api => ../api
