//! iperf3 3.19's `--cntl-ka[=IDLE/INTV/CNT]`: TCP keepalive on the control
//! connection (SO_KEEPALIVE, with TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT
//! where given; the kernel's defaults for the rest).

use std::net::TcpStream;
use std::os::fd::AsFd;

use super::error::NetError;
use crate::sockopt;

/// The kernel's limits: TCP_KEEPIDLE and TCP_KEEPINTVL 1–32767 s
/// (MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL), TCP_KEEPCNT 1–127.
const MAX_IDLE_INTV_S: u32 = 32_767;
const MAX_CNT: u32 = 127;

/// Keepalive on the control connection; `None`: the kernel's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeepAlive {
    pub(crate) idle_s: Option<u32>,
    pub(crate) intv_s: Option<u32>,
    pub(crate) cnt: Option<u32>,
}

impl KeepAlive {
    /// iperf3's syntax: `""` (all defaults), `IDLE`, `IDLE/INTV`,
    /// `IDLE/INTV/CNT`, each part may be empty (`/5/3`: default idle).
    pub fn parse(spec: &str) -> Result<KeepAlive, String> {
        let parts: Vec<&str> = spec.split('/').collect();
        if parts.len() > 3 {
            return Err(format!(
                "--cntl-ka `{spec}`: give at most IDLE/INTV/CNT (seconds, seconds, probes)"
            ));
        }
        let part = |i: usize, what: &str, max: u32| -> Result<Option<u32>, String> {
            match parts.get(i).map(|p| p.trim()).filter(|p| !p.is_empty()) {
                None => Ok(None),
                Some(p) => match p.parse::<u32>() {
                    Ok(v) if (1..=max).contains(&v) => Ok(Some(v)),
                    _ => Err(format!(
                        "--cntl-ka `{spec}`: {what} `{p}` must be a whole number from 1 to {max}"
                    )),
                },
            }
        };
        let ka = KeepAlive {
            idle_s: part(0, "IDLE", MAX_IDLE_INTV_S)?,
            intv_s: part(1, "INTV", MAX_IDLE_INTV_S)?,
            cnt: part(2, "CNT", MAX_CNT)?,
        };
        if let (Some(idle), Some(intv), Some(cnt)) = (ka.idle_s, ka.intv_s, ka.cnt) {
            ka.check_idle(idle, intv, cnt)?;
        }
        Ok(ka)
    }

    /// iperf3's rule: the idle time must be longer than the probes take
    /// (INTV × CNT), else the probes would start before the last one ended.
    fn check_idle(&self, idle: u32, intv: u32, cnt: u32) -> Result<(), String> {
        if self.idle_s.is_some() && idle <= intv * cnt {
            return Err(format!(
                "--cntl-ka: IDLE {idle} s must be more than INTV {intv} s × CNT {cnt} (iperf3's rule)"
            ));
        }
        Ok(())
    }

    /// Turn keepalive on for `ctrl`, with the values given; the effective
    /// (idle, interval, count), the kernel's defaults filled in.
    pub(crate) fn apply(&self, ctrl: &TcpStream) -> Result<(u32, u32, u32), NetError> {
        let io = |what: &'static str| move |e| NetError::io(what, e);
        let fd = ctrl.as_fd();
        sockopt::set_int(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)
            .map_err(io("turning on keepalive on the control connection"))?;
        let value = |given: Option<u32>, name: i32| -> Result<u32, NetError> {
            match given {
                Some(v) => {
                    sockopt::set_int(fd, libc::IPPROTO_TCP, name, v as i32)
                        .map_err(io("setting the control connection's keepalive"))?;
                    Ok(v)
                }
                None => get_int(ctrl, libc::IPPROTO_TCP, name)
                    .map_err(io("reading the control connection's keepalive")),
            }
        };
        let cnt = value(self.cnt, libc::TCP_KEEPCNT)?;
        let intv = value(self.intv_s, libc::TCP_KEEPINTVL)?;
        if let Some(idle) = self.idle_s {
            self.check_idle(idle, intv, cnt)
                .map_err(NetError::InvalidConfig)?;
        }
        let idle = value(self.idle_s, libc::TCP_KEEPIDLE)?;
        Ok((idle, intv, cnt))
    }
}

fn get_int(s: &TcpStream, level: i32, name: i32) -> std::io::Result<u32> {
    sockopt::get_int(s.as_fd(), level, name).map(|v| v.max(0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iperf3s_forms() {
        assert_eq!(KeepAlive::parse("").unwrap(), KeepAlive::default());
        let full = KeepAlive::parse("20/5/3").unwrap();
        assert_eq!(
            (full.idle_s, full.intv_s, full.cnt),
            (Some(20), Some(5), Some(3))
        );
        let mid = KeepAlive::parse("/5/").unwrap();
        assert_eq!((mid.idle_s, mid.intv_s, mid.cnt), (None, Some(5), None));
        for bad in ["10/5/3", "x", "1/2/3/4", "0", "20/5/200"] {
            assert!(KeepAlive::parse(bad).is_err(), "{bad}");
        }
        assert!(
            KeepAlive::parse("15/5/3")
                .unwrap_err()
                .contains("more than INTV")
        );
    }

    #[test]
    fn applies_the_given_values_and_reads_back_the_kernels_defaults() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (idle, intv, cnt) = KeepAlive::parse("/4/").unwrap().apply(&s).unwrap();
        assert_eq!(intv, 4);
        assert_eq!(
            get_int(&s, libc::SOL_SOCKET, libc::SO_KEEPALIVE).unwrap(),
            1
        );
        assert_eq!(
            get_int(&s, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL).unwrap(),
            4
        );
        assert_eq!(
            get_int(&s, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE).unwrap(),
            idle
        );
        assert_eq!(
            get_int(&s, libc::IPPROTO_TCP, libc::TCP_KEEPCNT).unwrap(),
            cnt
        );
        // An idle time the kernel's probes outlast is refused, as by iperf3.
        let short = KeepAlive {
            idle_s: Some(2),
            intv_s: Some(4),
            cnt: None,
        };
        assert!(matches!(short.apply(&s), Err(NetError::InvalidConfig(_))));
    }
}
