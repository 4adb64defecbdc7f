//! The results block both sides exchange after EXCHANGE_RESULTS.

use serde_json::{Map, Value, json};

use super::control::{json_f64, json_i64};
use super::error::NetError;

/// One stream's line in a results block.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StreamResult {
    /// Stream id (1, 3, 4, 5 …), matching the two sides' streams.
    pub(crate) id: u32,
    /// Sender: bytes sent (omit excluded); receiver: bytes received.
    pub(crate) bytes: u64,
    /// Retransmits of a TCP sender, else −1.
    pub(crate) retransmits: i64,
    /// UDP receiver jitter in seconds.
    pub(crate) jitter_s: f64,
    /// UDP receiver lost datagrams, the omit period's included.
    pub(crate) errors: i64,
    /// UDP: receiver's highest sequence number, or the sender's count, the
    /// omit period's included.
    pub(crate) packets: i64,
    /// The two counts at the end of the omit period (iperf3 3.21's
    /// `omitted_errors` and `omitted_packets`); `None` from a peer that does
    /// not send them (iperf3 before 3.21).
    pub(crate) omitted: Option<Omitted>,
    pub(crate) start_time: f64,
    pub(crate) end_time: f64,
}

/// `errors` and `packets` as they stood when the omit period ended.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Omitted {
    pub(crate) errors: i64,
    pub(crate) packets: i64,
}

/// A UDP stream's counts after the omit period, as the receiver reported
/// them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Counted {
    pub(crate) packets: u64,
    /// `None` when the peer did not say how many of its losses fell in the
    /// omit period (before 3.21) and some may have: as 3.21 reports it.
    pub(crate) lost: Option<u64>,
}

impl StreamResult {
    /// The counts after the omit period. `own_omitted_packets`: this side's
    /// own count at the omit period's end, used (as iperf3 does) when the
    /// peer did not send its own.
    pub(crate) fn counted(&self, own_omitted_packets: u64) -> Counted {
        let (omitted_packets, omitted_errors) = match self.omitted {
            Some(o) => (o.packets, Some(o.errors)),
            None if own_omitted_packets == 0 || self.errors <= 0 => {
                (own_omitted_packets as i64, Some(0))
            }
            None => (own_omitted_packets as i64, None),
        };
        let after = |total: i64, before: i64| total.saturating_sub(before).max(0) as u64;
        Counted {
            packets: after(self.packets, omitted_packets),
            lost: omitted_errors.map(|o| after(self.errors, o)),
        }
    }
}

/// A whole results block.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PeerResults {
    pub(crate) cpu_util_total: f64,
    pub(crate) cpu_util_user: f64,
    pub(crate) cpu_util_system: f64,
    /// 1: TCP sender with TCP_INFO; 0: UDP sender; −1: receiver only.
    pub(crate) sender_has_retransmits: i64,
    pub(crate) congestion_used: Option<String>,
    pub(crate) streams: Vec<StreamResult>,
}

impl PeerResults {
    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("cpu_util_total".into(), json!(self.cpu_util_total));
        m.insert("cpu_util_user".into(), json!(self.cpu_util_user));
        m.insert("cpu_util_system".into(), json!(self.cpu_util_system));
        m.insert(
            "sender_has_retransmits".into(),
            json!(self.sender_has_retransmits),
        );
        if let Some(c) = &self.congestion_used {
            m.insert("congestion_used".into(), json!(c));
        }
        let streams: Vec<Value> = self
            .streams
            .iter()
            .map(|s| {
                let mut j = json!({
                    "id": s.id,
                    "bytes": s.bytes,
                    "retransmits": s.retransmits,
                    "jitter": s.jitter_s,
                    "errors": s.errors,
                    "packets": s.packets,
                    "start_time": s.start_time,
                    "end_time": s.end_time,
                });
                if let Some(o) = s.omitted {
                    j["omitted_errors"] = json!(o.errors);
                    j["omitted_packets"] = json!(o.packets);
                }
                j
            })
            .collect();
        m.insert("streams".into(), Value::Array(streams));
        Value::Object(m)
    }

    /// Parse a peer's block; accepts 3.12's unsigned −1.
    pub(crate) fn from_json(v: &Value) -> Result<PeerResults, NetError> {
        let what = "results from the peer";
        let missing = |k: &str| NetError::BadJson {
            what: what.into(),
            detail: format!("missing or invalid `{k}`"),
        };
        let f = |k: &str| v.get(k).and_then(json_f64).ok_or_else(|| missing(k));
        let cpu_util_total = f("cpu_util_total")?;
        let cpu_util_user = f("cpu_util_user")?;
        let cpu_util_system = f("cpu_util_system")?;
        let sender_has_retransmits = v
            .get("sender_has_retransmits")
            .and_then(json_i64)
            .ok_or_else(|| missing("sender_has_retransmits"))?;
        let congestion_used = v
            .get("congestion_used")
            .and_then(Value::as_str)
            .map(str::to_string);
        let arr = v
            .get("streams")
            .and_then(Value::as_array)
            .ok_or_else(|| missing("streams"))?;
        let mut streams = Vec::with_capacity(arr.len());
        for s in arr {
            let i = |k: &str| {
                s.get(k)
                    .and_then(json_i64)
                    .ok_or_else(|| missing(&format!("streams[].{k}")))
            };
            let id = i("id")?;
            let bytes = i("bytes")?;
            streams.push(StreamResult {
                id: u32::try_from(id).map_err(|_| missing("streams[].id"))?,
                bytes: u64::try_from(bytes).unwrap_or(0),
                retransmits: i("retransmits")?,
                jitter_s: s
                    .get("jitter")
                    .and_then(json_f64)
                    .ok_or_else(|| missing("streams[].jitter"))?,
                errors: i("errors")?,
                packets: i("packets")?,
                omitted: omitted(s).map_err(|k| missing(&format!("streams[].{k}")))?,
                start_time: s.get("start_time").and_then(json_f64).unwrap_or(0.0),
                end_time: s.get("end_time").and_then(json_f64).unwrap_or(0.0),
            });
        }
        Ok(PeerResults {
            cpu_util_total,
            cpu_util_user,
            cpu_util_system,
            sender_has_retransmits,
            congestion_used,
            streams,
        })
    }

    /// The stream with this id, if the peer reported it.
    pub(crate) fn stream(&self, id: u32) -> Option<&StreamResult> {
        self.streams.iter().find(|s| s.id == id)
    }
}

/// A stream's `omitted_errors` and `omitted_packets`: both or neither, as
/// 3.21 requires (one without the other is the key that is missing).
fn omitted(s: &Value) -> Result<Option<Omitted>, &'static str> {
    let get = |k| s.get(k).map(|v| json_i64(v).ok_or(k)).transpose();
    match (get("omitted_errors")?, get("omitted_packets")?) {
        (Some(errors), Some(packets)) => Ok(Some(Omitted { errors, packets })),
        (None, None) => Ok(None),
        (Some(_), None) => Err("omitted_packets"),
        (None, Some(_)) => Err("omitted_errors"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iperf3_312_receiver_block() {
        let text = r#"{"cpu_util_total":64.94,"cpu_util_user":2.1,"cpu_util_system":58.9,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr","streams":[{"id":1,"bytes":4485283840,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":2.000418}]}"#;
        let r = PeerResults::from_json(&serde_json::from_str(text).unwrap()).unwrap();
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.streams[0].retransmits, -1);
        assert_eq!(r.streams[0].bytes, 4485283840);
        assert_eq!(r.congestion_used.as_deref(), Some("bbr"));
        assert!((r.streams[0].end_time - 2.000418).abs() < 1e-9);
        let again = PeerResults::from_json(&r.to_json()).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn requires_keys() {
        let text = r#"{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":1,"streams":[]}"#;
        assert!(PeerResults::from_json(&serde_json::from_str(text).unwrap()).is_err());
        let text = r#"{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":1,"sender_has_retransmits":1,"streams":[{"id":1}]}"#;
        assert!(PeerResults::from_json(&serde_json::from_str(text).unwrap()).is_err());
    }

    #[test]
    fn iperf3_321_omitted_counts_go_both_ways_and_come_as_a_pair() {
        let text = r#"{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":-1,"streams":[{"id":1,"bytes":1000,"retransmits":-1,"jitter":0.001,"errors":11,"omitted_errors":4,"packets":1398,"omitted_packets":399,"start_time":0,"end_time":2}]}"#;
        let r = PeerResults::from_json(&serde_json::from_str(text).unwrap()).unwrap();
        let o = r.streams[0].omitted.expect("the pair");
        assert_eq!((o.errors, o.packets), (4, 399));
        assert_eq!(PeerResults::from_json(&r.to_json()).unwrap(), r);
        for (drop, named) in [
            ("\"omitted_errors\":4,", "omitted_errors"),
            ("\"omitted_packets\":399,", "omitted_packets"),
        ] {
            let v = serde_json::from_str(&text.replace(drop, "")).unwrap();
            let e = PeerResults::from_json(&v).unwrap_err().to_string();
            assert!(e.contains(named), "{e}");
        }
    }

    #[test]
    fn counts_after_the_omit_period() {
        let mut s = StreamResult {
            id: 1,
            bytes: 0,
            retransmits: -1,
            jitter_s: 0.0,
            errors: 11,
            packets: 1398,
            omitted: Some(Omitted {
                errors: 4,
                packets: 399,
            }),
            start_time: 0.0,
            end_time: 2.0,
        };
        let c = |s: &StreamResult, own| s.counted(own);
        assert_eq!(
            c(&s, 123),
            Counted {
                packets: 999,
                lost: Some(7)
            }
        );
        s.omitted = None;
        // Before 3.21: this side's own omit count; the losses are all after
        // the omit period when there was none, and unknown when there was.
        assert_eq!(
            c(&s, 0),
            Counted {
                packets: 1398,
                lost: Some(11)
            }
        );
        assert_eq!(
            c(&s, 400),
            Counted {
                packets: 998,
                lost: None
            }
        );
        s.errors = 0;
        assert_eq!(
            c(&s, 400),
            Counted {
                packets: 998,
                lost: Some(0)
            }
        );
        // A count that went back is never a negative figure.
        assert_eq!(c(&s, 5000).packets, 0);
    }

    #[test]
    fn the_captured_321_server_results_count_after_the_omit_period() {
        // What iperf3 3.21's server said to `hlctl bench net -u -b 10M -O 1
        // -t 2`: state bytes, then the results block, length first.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/iperf3-3.21/server-udp-omit.bin"
        );
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(bytes[..5], [9, 10, 1, 2, 13], "up to EXCHANGE_RESULTS");
        let len = u32::from_be_bytes(bytes[5..9].try_into().unwrap()) as usize;
        assert_eq!(bytes.len(), 9 + len + 1, "the block, then DISPLAY_RESULTS");
        assert_eq!(bytes[9 + len], 14);
        let v = serde_json::from_slice(&bytes[9..9 + len]).unwrap();
        let r = PeerResults::from_json(&v).unwrap();
        let s = &r.streams[0];
        let o = s.omitted.expect("3.21 sends the omitted pair");
        assert_eq!((s.packets, o.packets, s.errors, o.errors), (115, 39, 0, 0));
        // 76 datagrams of 32 KiB after the omit period: the bytes it counted.
        let c = s.counted(0);
        assert_eq!(
            c,
            Counted {
                packets: 76,
                lost: Some(0)
            }
        );
        assert_eq!(s.bytes, 76 * 32768);
    }
}
