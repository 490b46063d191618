#!/bin/sh
# Builds ringcp's image (deploy/Containerfile) with podman, or buildah
# when there is no podman: a static binary (CGO_ENABLED=0) and the host's
# CA bundle in an image FROM scratch. No registry is reached.
#
#   deploy/build-image.sh [TAG]        (default localhost/ringcp:VERSION)
#
# CA_BUNDLE names another PEM bundle (default Debian's).
set -eu
cd "$(dirname "$0")/.."
version=$(git describe --tags --always --dirty 2>/dev/null || echo devel)
tag=${1:-localhost/ringcp:$version}
bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$ctx/ringcp" .
cp "$bundle" "$ctx/ca-certificates.crt"
cp deploy/Containerfile "$ctx/Containerfile"
if command -v podman >/dev/null; then
	podman build --network none --build-arg VERSION="$version" -t "$tag" "$ctx"
else
	buildah bud --network none --build-arg VERSION="$version" -t "$tag" "$ctx"
fi
echo "$tag"
