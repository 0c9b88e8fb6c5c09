module github.com/scyllakube/managerclient

go 1.26.0
