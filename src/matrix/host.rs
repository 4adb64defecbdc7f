//! One host's own figures as the fleet's Prometheus holds them: the disks
//! and the CPU its last `hlctl check` measured (`hlctl_disk_bytes_per_second`,
//! `hlctl_cpu_events_per_second`). `bench file` reads its server's this way
//! when the server is a host of the lab: the layers it cannot measure from
//! the client, measured on the server by the server itself.

use super::prom::Sample;
use super::{HOST_LABEL, Lab, MatrixError, OWN_ADDRESSES, Server};
use crate::protocol::Beside;
use crate::protocol::fleet::{HostCpu, HostDisk, HostFigures};

/// Each directory's disk figures, by pattern (`seq-read`, `seq-write`, ...).
pub(crate) const DISK: &str = "hlctl_disk_bytes_per_second";
/// The CPU's events per second, by threads.
pub(crate) const CPU: &str = "hlctl_cpu_events_per_second";

/// The fleet's Prometheus and the label that names its hosts: where a
/// file transfer's server is looked up (`bench file`, doctor's mounts).
#[derive(Clone, Debug)]
pub(crate) struct Fleet {
    pub(crate) prometheus: Server,
    pub(crate) host_label: String,
}

impl Fleet {
    /// `--prometheus URL` and `--host-label` (None: [`HOST_LABEL`]).
    pub(crate) fn parse(url: &str, host_label: Option<&str>) -> Result<Fleet, MatrixError> {
        Ok(Fleet {
            prometheus: Server::parse(url)?,
            host_label: host_label.unwrap_or(HOST_LABEL).to_string(),
        })
    }

    /// The server's own figures, found by its name and the address it
    /// resolved to, or why there are none (no server: a local directory).
    pub(crate) fn server(
        &self,
        server: Option<&str>,
        address: Option<&str>,
    ) -> Beside<HostFigures> {
        let skipped = |why: String| Beside::Skipped { why };
        let Some(server) = server else {
            return skipped("a local directory: no server".into());
        };
        let mut names = vec![server.to_string()];
        names.extend(address.filter(|a| *a != server).map(str::to_string));
        match host_figures(&self.prometheus, &self.host_label, &names) {
            Ok(Some(h)) => Beside::Measured(h),
            Ok(None) => skipped(format!(
                "no host known by {} has published disk or CPU figures to {} (its `hlctl check` \
                 with [check] dirs and cpu, through its node_exporter)",
                names.join(" or "),
                self.prometheus.shown()
            )),
            Err(e) => skipped(e.to_string()),
        }
    }
}

/// The figures of the lab's host known by any of `names` (the server's
/// name, the address it resolved to), rows named by `host_label`; None when
/// no host of the fleet answers to them.
pub(crate) fn host_figures(
    server: &Server,
    host_label: &str,
    names: &[String],
) -> Result<Option<HostFigures>, MatrixError> {
    let disks = server.query(DISK)?;
    let cpu = server.query(CPU)?;
    let own = server.query(OWN_ADDRESSES)?;
    Ok(pick(server.shown(), &disks, &cpu, &own, host_label, names))
}

/// [`host_figures`] on series already read.
pub(crate) fn pick(
    prometheus: &str,
    disks: &[Sample],
    cpu: &[Sample],
    own: &[Sample],
    host_label: &str,
    names: &[String],
) -> Option<HostFigures> {
    let lab = Lab::named(disks.iter().chain(cpu), own, host_label);
    let host = lab.known_as(names)?;
    let of_host = |s: &&Sample| lab.host(s) == host && s.value.is_finite();
    let disks: Vec<HostDisk> = disks
        .iter()
        .filter(of_host)
        .filter_map(|s| {
            let pattern = s.label("pattern").filter(|p| p.starts_with("seq-"))?;
            Some(HostDisk {
                dir: s.label("dir")?.to_string(),
                pattern: pattern.to_string(),
                bytes_per_second: s.value,
            })
        })
        .collect();
    let cpu: Vec<HostCpu> = cpu
        .iter()
        .filter(of_host)
        .filter_map(|s| {
            Some(HostCpu {
                threads: s.label("threads")?.parse().ok()?,
                events_per_second: s.value,
            })
        })
        .collect();
    Some(HostFigures {
        host,
        prometheus: prometheus.to_string(),
        disks,
        cpu,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(labels: &[(&str, &str)], value: f64) -> Sample {
        Sample::of(labels, value)
    }

    fn disk(host: &str, instance: &str, dir: &str, pattern: &str, v: f64) -> Sample {
        s(
            &[
                ("host", host),
                ("instance", instance),
                ("dir", dir),
                ("pattern", pattern),
            ],
            v,
        )
    }

    /// nas (two directories) and pve1 publish disks; nas is found by its
    /// instance's address and by an address it publishes, and only its own
    /// sequential figures come back.
    #[test]
    fn the_server_is_found_by_address_and_only_its_figures_are_taken() {
        let disks = [
            disk("nas", "10.71.0.1:9100", "/srv", "seq-read", 180e6),
            disk("nas", "10.71.0.1:9100", "/srv", "seq-write", 90e6),
            disk("nas", "10.71.0.1:9100", "/tank", "seq-read", 400e6),
            disk("nas", "10.71.0.1:9100", "/srv", "randread-4k", 4e6),
            disk("pve1", "10.71.0.2:9100", "/var", "seq-read", 900e6),
        ];
        let cpu = [
            s(
                &[
                    ("host", "nas"),
                    ("instance", "10.71.0.1:9100"),
                    ("threads", "4"),
                ],
                5000.0,
            ),
            s(
                &[
                    ("host", "pve1"),
                    ("instance", "10.71.0.2:9100"),
                    ("threads", "1"),
                ],
                900.0,
            ),
        ];
        let own = [s(
            &[
                ("host", "nas"),
                ("instance", "10.71.0.1:9100"),
                ("address", "192.168.1.5"),
            ],
            1e9,
        )];
        for names in [["10.71.0.1".to_string()], ["192.168.1.5".to_string()]] {
            let f = pick("http://p:9090", &disks, &cpu, &own, "host", &names).unwrap();
            assert_eq!(f.host, "nas");
            assert_eq!(f.disks.len(), 3, "{f:?}");
            assert_eq!(f.fastest("seq-read").unwrap().dir, "/tank");
            assert_eq!(f.fastest("seq-write").unwrap().bytes_per_second, 90e6);
            assert_eq!(
                f.cpu,
                [HostCpu {
                    threads: 4,
                    events_per_second: 5000.0
                }]
            );
        }
        let none = pick("p", &disks, &cpu, &own, "host", &["10.9.9.9".into()]);
        assert_eq!(none, None);
    }

    /// Without a `host` label the instance names the row, and is found by
    /// its own address.
    #[test]
    fn an_instance_without_a_host_label_is_its_own_name() {
        let disks = [s(
            &[
                ("instance", "nas.lab:9100"),
                ("dir", "/srv"),
                ("pattern", "seq-read"),
            ],
            1e8,
        )];
        let f = pick("p", &disks, &[], &[], "host", &["nas.lab".into()]).unwrap();
        assert_eq!(f.host, "nas.lab:9100");
        assert_eq!(f.disks[0].bytes_per_second, 1e8);
    }
}
