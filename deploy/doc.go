// Package deploy holds no code: its directory is ringcp's container image
// (Containerfile, build-image.sh) and Kubernetes manifests (kubernetes/),
// and its tests build the image and run it with podman, and validate the
// manifests with kubectl, offline.
package deploy
