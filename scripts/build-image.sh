#!/usr/bin/env bash
# Build hlctl's OCI image with buildah: `scratch` + the static binary
# (scripts/build-static.sh) and nothing else, saved as an OCI archive for
# `podman load` (target/oci/hlctl-VERSION.oci.tar) and as a Docker archive
# for `docker load` (target/oci/hlctl-VERSION.docker.tar.gz): Docker 20.10
# (Debian 12's docker.io) cannot load an OCI archive.
#
# At run time hlctl needs only the kernel's /proc, /sys and netlink (and a
# mounted volume for its state): no libraries, no /etc files. Inside the
# image, HLCTL_LOCAL=true (no system bus: the engine runs in the container's
# process) and the persisted sysctls go to /var/lib/hlctl/sysctl.d, on the
# mounted volume with the state and history, where `hlctl reapply` at boot
# finds them (docs/nas.md).
#
# Usage: scripts/build-image.sh   (as root; prints the archive's path last;
#   the image's ID goes to target/oci/hlctl-VERSION.image-id)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
command -v buildah >/dev/null || { echo "build-image: buildah missing: run scripts/setup.sh" >&2; exit 1; }
bin=$("$here/scripts/build-static.sh" | tail -n 1)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
revision=$(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)
out="$here/target/oci"
archive="$out/hlctl-$version.oci.tar"
tag="localhost/hlctl:$version"
mkdir -p "$out"

ctr=$(buildah from scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah copy --chmod 0755 "$ctr" "$bin" /usr/bin/hlctl >/dev/null
buildah config \
    --entrypoint '["/usr/bin/hlctl"]' \
    --cmd '["--help"]' \
    --env HLCTL_LOCAL=true \
    --env HLCTL_SYSCTL_DIR=/var/lib/hlctl/sysctl.d \
    --volume /var/lib/hlctl \
    --label org.opencontainers.image.title=hlctl \
    --label "org.opencontainers.image.description=Inspect, change, benchmark and tune the network of a home-lab box (static build)" \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.revision=$revision" \
    --label "org.opencontainers.image.created=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --label "org.opencontainers.image.licenses=MIT OR Apache-2.0" \
    --label org.opencontainers.image.source=https://github.com/hlctl/hlctl \
    "$ctr"
id=$(buildah commit --quiet --format oci --rm "$ctr" "$tag")
trap - EXIT
# The image's ID, for tests that must run this build and not whatever another
# checkout on the same machine tagged localhost/hlctl:VERSION since.
echo "$id" > "$out/hlctl-$version.image-id"
rm -f "$archive"
buildah push --quiet "$tag" "oci-archive:$archive:$tag" >/dev/null
# The same image as a Docker archive (gzip'd): Docker before 25 (Debian 12's
# docker.io 20.10, Synology's Container Manager) cannot load an OCI archive
# ("open .../blobs/json: no such file or directory").
dtar="$out/hlctl-$version.docker.tar"
rm -f "$dtar" "$dtar.gz"
buildah push --quiet "$tag" "docker-archive:$dtar:$tag" >/dev/null
gzip -n -9 "$dtar"
echo "build-image: $tag, $(stat -c %s "$archive") bytes ($archive), $(stat -c %s "$dtar.gz") bytes ($dtar.gz)" >&2
echo "$archive"
