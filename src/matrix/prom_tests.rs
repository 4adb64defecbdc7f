use super::*;

#[test]
fn urls_with_and_without_scheme_port_path_and_user() {
    let s = Server::parse("http://prom.lab:9091/prometheus/").unwrap();
    assert_eq!(
        (s.host.as_str(), s.port, s.prefix.as_str()),
        ("prom.lab", 9091, "/prometheus")
    );
    assert_eq!(s.shown(), "http://prom.lab:9091/prometheus/");
    let s = Server::parse("http://grafana:s3cret@10.0.0.5").unwrap();
    assert_eq!(
        (s.port, s.userinfo.as_deref()),
        (80, Some("grafana:s3cret"))
    );
    assert!(!s.shown().contains("s3cret"), "{}", s.shown());
    let s = Server::parse("nas").unwrap();
    assert_eq!(
        (s.host.as_str(), s.port, s.prefix.as_str()),
        ("nas", 9090, "")
    );
    let s = Server::parse("http://[fd00::9]:9090").unwrap();
    assert_eq!((s.host.as_str(), s.port), ("fd00::9", 9090));
}

#[test]
fn bad_urls_say_what_is_wrong_and_what_is_allowed() {
    for (url, says) in [
        ("https://prom:9090", "no TLS client"),
        ("ftp://prom", "\"ftp\" is not http"),
        ("http://:9090", "no host"),
        ("http://prom:0", "port \"0\" is not 1 to 65535"),
        ("http://prom:99999", "is not 1 to 65535"),
        ("http://prom:9090/?x=1", "query or fragment"),
    ] {
        let e = Server::parse(url).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains(says) && msg.contains("allowed: http://HOST"),
            "{url}: {msg}"
        );
        assert_eq!(e.class(), crate::class::Class::Invalid);
    }
}

#[test]
fn the_query_is_percent_encoded() {
    assert_eq!(
        encode("a{b=\"c d\"} / 1e6"),
        "a%7Bb%3D%22c%20d%22%7D%20%2F%201e6"
    );
}

#[test]
fn a_reply_splits_into_status_and_body() {
    let raw = b"HTTP/1.0 400 Bad Request\r\nContent-Type: application/json\r\n\r\n{\"x\":1}";
    assert_eq!(split_reply(raw), Some((400, b"{\"x\":1}".to_vec())));
    assert_eq!(split_reply(b"SSH-2.0-OpenSSH_9.2\r\n"), None);
}

fn reply(status: u16, body: &str) -> (u16, Vec<u8>) {
    (status, body.as_bytes().to_vec())
}

/// A reply as Prometheus 2.42 (Debian 12) gives it.
#[test]
fn an_instant_vector_gives_its_samples() {
    let body = r#"{"status":"success","data":{"resultType":"vector","result":[
        {"metric":{"__name__":"hlctl_net_throughput_bps","direction":"upload","host":"nas","instance":"10.71.0.1:9100","job":"node","peer":"10.71.0.2:5201"},"value":[1765000000.5,"198400000"]},
        {"metric":{"host":"pve1","peer":"x"},"value":[1765000000.5,"NaN"]}]}}"#;
    let s = samples("http://p", "q", &reply(200, body)).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].label("host"), Some("nas"));
    assert_eq!(s[0].value, 198400000.0);
    assert!(s[1].value.is_nan());
}

#[test]
fn an_error_reply_names_the_query_and_prometheus_s_message() {
    let body = r#"{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:5: parse error"}"#;
    let e = samples("http://p", "up{", &reply(400, body)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("refused the query up{") && msg.contains("bad_data: invalid parameter"),
        "{msg}"
    );
    let e = samples("http://p", "up", &reply(404, "404 page not found\n")).unwrap_err();
    assert!(
        e.to_string()
            .contains("HTTP 404, not Prometheus's JSON: \"404 page not found"),
        "{e}"
    );
    let body = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
    let e = samples("http://p", "up[5m]", &reply(200, body)).unwrap_err();
    assert!(
        e.to_string().contains("instead of an instant vector"),
        "{e}"
    );
    assert_eq!(e.class(), crate::class::Class::Failed);
}

/// A real listener that answers once with `reply`: the request hlctl sent.
fn serve_once(reply: &'static str) -> (u16, std::thread::JoinHandle<String>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut req = Vec::new();
        let mut buf = [0u8; 4096];
        while !req.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = c.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            req.extend_from_slice(&buf[..n]);
        }
        c.write_all(reply.as_bytes()).unwrap();
        String::from_utf8(req).unwrap()
    });
    (port, t)
}

#[test]
fn a_query_goes_out_as_one_http_1_0_get_under_the_prefix_with_basic_auth() {
    let (port, t) = serve_once(
        "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"instance\":\"a\"},\"value\":[1,\"2.5\"]}]}}",
    );
    let s = Server::parse(&format!("http://me:pw@127.0.0.1:{port}/prom")).unwrap();
    let got = s.query("up{job=\"node\"}").unwrap();
    assert_eq!(got[0].value, 2.5);
    let req = t.join().unwrap();
    assert!(
        req.starts_with("GET /prom/api/v1/query?query=up%7Bjob%3D%22node%22%7D HTTP/1.0\r\n"),
        "{req}"
    );
    // base64("me:pw")
    assert!(
        req.contains("\r\nAuthorization: Basic bWU6cHc=\r\n"),
        "{req}"
    );
}

#[test]
fn nothing_listening_is_an_error_naming_the_url_and_address() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let e = Server::parse(&format!("127.0.0.1:{port}"))
        .unwrap()
        .query("up")
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "Prometheus at http://127.0.0.1:{port} (127.0.0.1:{port})"
        )) && msg.contains("refused"),
        "{msg}"
    );
}
