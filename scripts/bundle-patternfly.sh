#!/usr/bin/env bash
# Bundle PatternFly 4's CSS for the Cockpit page: target/cockpit/patternfly.css
#
#   scripts/bundle-patternfly.sh        write it (build-deb.sh calls this)
#
# The version is the one Cockpit 287's own pages use (PatternFly 4), pinned by
# packaging/cockpit/package.json and its package-lock.json and installed with
# `npm ci` once into target/npm/patternfly-<hash of both> (under a lock: two
# test binaries may build the package at once). Only CSS is bundled, no
# React: the page is plain ES modules.
#
# What goes in: PatternFly's base (variables, both themes, the reset) without
# its @font-face rules, which name font files we do not ship: the page uses
# the Red Hat fonts Cockpit itself serves from /cockpit/static/fonts (the
# page is /cockpit/@HOST/hlctl/, so ../../static/fonts); then the components
# and layouts the page's markup uses, in COMPONENTS below. The form
# control's status-icon sprite is a file we do not ship either: its lines go.
# Any other url() than a data: URI or those fonts stops the build.
set -euo pipefail
cd "$(dirname "$0")/.."

COMPONENTS=(
    layouts/Bullseye/bullseye.css
    components/Alert/alert.css
    components/Backdrop/backdrop.css
    components/Button/button.css
    components/Card/card.css
    components/EmptyState/empty-state.css
    components/FormControl/form-control.css
    components/Label/label.css
    components/ModalBox/modal-box.css
    components/Spinner/spinner.css
    components/Table/table.css
    components/Table/table-grid.css
    components/Tabs/tabs.css
    components/Title/title.css
)
# Cockpit 287's static/fonts: family, file, weight.
FONTS=(
    "RedHatDisplay RedHatDisplay-Regular 400"
    "RedHatDisplay RedHatDisplay-Medium 500"
    "RedHatDisplay RedHatDisplay-Bold 700"
    "RedHatText RedHatText-Regular 400"
    "RedHatText RedHatText-Medium 500"
    "RedHatText RedHatText-Bold 700"
)

src=packaging/cockpit
out=target/cockpit/patternfly.css
hash=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-16)
cache=target/npm/patternfly-$hash
mkdir -p target/npm "$(dirname "$out")"

install() {
    [ -e "$cache/node_modules/@patternfly/patternfly/patternfly-base.css" ] && return
    tmp=$(mktemp -d target/npm/npm-ci.XXXXXX)
    cp "$src/package.json" "$src/package-lock.json" "$tmp/"
    (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) >&2 ||
        { rm -rf "$tmp"; echo "bundle-patternfly: npm ci failed (scripts/setup.sh installs npm)" >&2; exit 1; }
    rm -rf "$cache"
    mv "$tmp" "$cache"
}

fonts() {
    for f in "${FONTS[@]}"; do
        read -r family file weight <<<"$f"
        printf '@font-face {\n  font-family: "%s";\n  src: url("../../static/fonts/%s.woff2") format("woff2");\n  font-style: normal;\n  font-weight: %s;\n}\n' \
            "$family" "$file" "$weight"
    done
}

# The base without its @font-face blocks.
base() {
    awk '/^@font-face/ { skip = 1 } !skip { print } skip && /^}/ { skip = 0 }' "$1"
}

bundle() {
    local pf=$cache/node_modules/@patternfly/patternfly
    echo "/* PatternFly $(node -p "require('./$pf/package.json').version") (MIT), as scripts/bundle-patternfly.sh bundles it for hlctl's Cockpit page. */"
    fonts
    base "$pf/patternfly-base.css"
    for c in "${COMPONENTS[@]}"; do
        [ -e "$pf/$c" ] || { echo "bundle-patternfly: $c is not in PatternFly" >&2; exit 1; }
        grep -v 'status-icon-sprite' "$pf/$c"
    done
}

exec 9>target/npm/.patternfly.lock
flock 9
install
tmp_out=$(mktemp "$out.XXXXXX")
bundle >"$tmp_out"
bad=$(grep -o 'url([^)]*)' "$tmp_out" | grep -v -e '^url("data:' -e '^url("../../static/fonts/' || true)
if [ -n "$bad" ]; then
    rm -f "$tmp_out"
    echo "bundle-patternfly: a url() the package does not carry: $(echo "$bad" | head -3)" >&2
    exit 1
fi
chmod 644 "$tmp_out"
mv "$tmp_out" "$out"
echo "$out"
