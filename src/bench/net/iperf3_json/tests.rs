use super::start::rfc1123;

#[test]
fn rfc1123_as_iperf3_writes_it() {
    // Both observed in iperf3 3.12's own -J output on this machine.
    assert_eq!(rfc1123(1_796_225_431), "Wed, 02 Dec 2026 15:30:31 GMT");
    assert_eq!(rfc1123(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(rfc1123(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
}
