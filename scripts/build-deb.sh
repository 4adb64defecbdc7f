#!/usr/bin/env bash
# Build the Debian package: target/debian/hlctl_<version>_<arch>.deb
# (release build, man pages and shell completions generated from the clap
# definitions, packed by cargo-deb from [package.metadata.deb] in Cargo.toml).
#
#   scripts/build-deb.sh                     release build (what users install)
#   scripts/build-deb.sh --dev               package the dev-profile binaries
#                                            `cargo test` already built (the tests)
#   scripts/build-deb.sh --out DIR           write the .deb into DIR
#   scripts/build-deb.sh --install-cargo-deb only install the pinned cargo-deb
#
# Installs cargo-deb $CARGO_DEB_VERSION with `cargo install --locked` when it
# is missing (about 3 minutes, once). Prints the path of the .deb last.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_DEB_VERSION=3.8.0

install_cargo_deb() {
    if [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb $CARGO_DEB_VERSION" ]; then
        echo "build-deb: installing cargo-deb $CARGO_DEB_VERSION" >&2
        cargo install --locked --quiet cargo-deb --version "$CARGO_DEB_VERSION" \
            --no-default-features --features lzma
    fi
}

profile=release
out=target/debian
while [ $# -gt 0 ]; do
    case "$1" in
        --dev) profile=dev ;;
        --out) out=${2:?--out needs a directory}; shift ;;
        --install-cargo-deb) install_cargo_deb; exit 0 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "build-deb: unknown argument $1 (allowed: --dev, --out DIR, --install-cargo-deb)" >&2; exit 2 ;;
    esac
    shift
done

install_cargo_deb
cargo build --locked --profile "$profile" --bins
# Man pages and completions into target/assets (the paths Cargo.toml packs).
cargo run --locked --quiet --profile "$profile" --example gen-assets -- target/assets
# PatternFly's CSS for the Cockpit page (target/cockpit/patternfly.css).
scripts/bundle-patternfly.sh >/dev/null

flags=(--locked --no-build --strip --output "$out")
if [ "$profile" = dev ]; then
    # cargo-deb warns that it is meant for release builds: the tests package the
    # debug binaries on purpose (same files, no second full build), stripped.
    flags+=(--profile dev --fast --quiet)
fi
mkdir -p "$out"
cargo deb "${flags[@]}"
