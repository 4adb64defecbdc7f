//! Live counters on the bus: nothing is announced by default; while a
//! client that asked for a 300 ms refresh stays connected, the Counters of
//! a link with traffic arrive by PropertiesChanged a few times a second;
//! when that client leaves the bus they stop. Traffic: raw Ethernet frames
//! sent on one end of the lab's veth pair (AF_PACKET, from Python).

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::bus::DaemonLab as Lab;

/// Frames on `iface` (in the lab's namespace) every 20 ms for `secs`.
fn traffic(lab: &Lab, iface: &str, secs: u32) -> Child {
    let script = format!(
        "import socket,time\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\ns.bind(('{iface}',0))\nend=time.time()+{secs}\nwhile time.time()<end:\n    s.send(b'\\xff'*6+b'\\x02'*6+b'\\x88\\xb5'+b'x'*64)\n    time.sleep(0.02)\n"
    );
    Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.ns.name,
            "/usr/bin/python3",
            "-c",
            &script,
        ])
        .spawn()
        .unwrap()
}

/// A client that asks for `ms` and stays on the bus for `secs`.
fn watcher(lab: &Lab, ms: u32, secs: u32) -> Child {
    let script = format!(
        "import dbus,time\nb=dbus.bus.BusConnection('{}')\nm=b.get_object('org.hlctl.Daemon1','/org/hlctl/Daemon1')\nprint(m.SetCountersRefresh(dbus.UInt32({ms}),dbus_interface='org.hlctl.Daemon1.Manager'),flush=True)\ntime.sleep({secs})\n",
        lab.rig.address
    );
    Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Counters announcements on `path` within `within`.
fn counted(lab: &Lab, stream: &mut zbus::MessageStream, path: &str, within: Duration) -> usize {
    lab.rig.rt.block_on(async {
        let end = tokio::time::Instant::now() + within;
        let mut n = 0;
        while let Ok(Some(Ok(m))) =
            tokio::time::timeout_at(end, hlctl::dbus::wire::next(stream)).await
        {
            if m.header().path().map(|p| p.as_str()) != Some(path) {
                continue;
            }
            let (_, changed, _): (
                String,
                std::collections::HashMap<String, zbus::OwnedVariant>,
                Vec<String>,
            ) = m.body().deserialize().unwrap();
            n += usize::from(changed.contains_key("Counters"));
        }
        n
    })
}

#[test]
fn counters_arrive_at_the_asked_rate_while_the_client_stays() {
    let lab = Lab::new(&[]);
    let path = lab.link_path(&lab.a);
    let mut stream = lab.properties_changed(&path);
    let mut send = common::ChildGuard(traffic(&lab, &lab.a, 9));
    assert_eq!(
        counted(&lab, &mut stream, &path, Duration::from_millis(1500)),
        0,
        "announced without anyone asking"
    );
    let t = Instant::now();
    let mut w = common::ChildGuard(watcher(&lab, 300, 3));
    std::thread::sleep(Duration::from_millis(500));
    let n = counted(&lab, &mut stream, &path, Duration::from_secs(2));
    assert!(
        (3..=10).contains(&n),
        "{n} announcements in 2 s at 300 ms:\n{}",
        lab.log()
    );
    let status = w.0.wait().unwrap();
    assert!(status.success(), "the watcher failed");
    eprintln!("watcher gone after {:?}", t.elapsed());
    // Its request ended with it: one tick in flight at most, then silence.
    counted(&lab, &mut stream, &path, Duration::from_millis(400));
    let after = counted(&lab, &mut stream, &path, Duration::from_millis(1500));
    assert_eq!(
        after,
        0,
        "still announced after the client left:\n{}",
        lab.log()
    );
    let _ = send.0.kill();
}
