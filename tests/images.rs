//! The images that the booted-system and package tests share, made before
//! any of them runs: the guest disk image every booted-system test boots
//! (tests/common/sysvm.rs, a debootstrap of Debian 12 with its packages)
//! and the clean root the .deb tests unpack (tests/common/deb.rs). Both are
//! cached under /var/tmp by their inputs, so on a warm machine this takes a
//! second. scripts/test.sh builds this binary first and runs it beside
//! clippy and the build of the others: on a bare machine the debootstraps
//! (downloads and dpkg, ~6 min) then overlap the compiler instead of
//! holding up the first VM test. Run alone, it makes the images the same way
//! the tests would.

mod common;

use std::path::Path;
use std::process::Command;

use common::deb::{PACKAGE_ROOT, cached_tarball};
use common::sysvm::guest_image;

/// The members of a tar archive.
fn members(tarball: &Path) -> String {
    let o = Command::new("tar")
        .arg("-tf")
        .arg(tarball)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tar -tf {tarball:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{p:?}: {e}"))
        .len()
}

#[test]
fn the_guest_image_is_made_with_its_kernel_and_initramfs() {
    common::require_root("debootstrap and mkfs of the guest image");
    let img = guest_image();
    // An ext4 image of a whole Debian root, a kernel, an initramfs with the
    // guest's modules: sizes far above an empty or truncated file.
    assert!(size(&img.disk) > 256 << 20, "disk image {:?}", img.disk);
    assert!(size(&img.kernel) > 1 << 20, "kernel {:?}", img.kernel);
    assert!(size(&img.initrd) > 64 << 10, "initramfs {:?}", img.initrd);
    // A second call finds the cached image (the tests that boot it call it again).
    assert_eq!(guest_image().disk, img.disk);
}

#[test]
fn the_package_root_holds_dbus_polkit_and_systemd() {
    common::require_root("debootstrap of the package root");
    let list = members(&cached_tarball(&PACKAGE_ROOT));
    for want in [
        "usr/bin/dbus-daemon",
        "usr/lib/polkit-1/polkitd",
        "usr/bin/systemctl",
    ] {
        assert!(
            list.lines()
                .any(|l| l.trim_start_matches("./").trim_end_matches('/') == want),
            "the package root has no {want}"
        );
    }
}
