module github.com/scyllakube/api

go 1.26.0

require (
	k8s.io/api v0.37.1 // indirect
	k8s.io/apimachinery v0.37.1 // indirect
)
