//! Every verb's declaration (`hlctl::dbus::wire::verb::VERBS`) against what
//! must agree with it, without root or a bus: the introspection XML (the
//! method exists on its interface; its comment lists exactly the declared
//! option keys with their D-Bus types, a benchmark's `Params[KIND]` its
//! params, and its `Errors:`; the authorization table names its polkit
//! action), the polkit policy (each action exists), clap (every flag of
//! the command maps to a declared key or is declared command-line only,
//! and every flag a key names exists), the wire codec (a full options
//! struct encodes to every declared key with its type and decodes back to
//! itself) and the history kinds (each stored by exactly one verb, as
//! `ListHistory`'s `kind` documents them).

use std::collections::{BTreeMap, BTreeSet};

use hlctl::dbus::wire::verb::{Key, Nature, VERBS, Verb};
use hlctl::history::Kind;

fn file(rel: &str) -> String {
    std::fs::read_to_string(format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn xml() -> String {
    file("dbus/org.hlctl.Daemon1.xml")
}

/// The text without its parenthesised parts, on one line.
fn unbracketed(s: &str) -> String {
    let mut depth = 0;
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The comment right above `<method name="MEMBER">` in `interface`.
fn comment(xml: &str, v: &Verb) -> String {
    let start = xml
        .find(&format!(
            r#"<interface name="org.hlctl.Daemon1.{}">"#,
            v.interface
        ))
        .unwrap_or_else(|| panic!("no interface {}", v.interface));
    let body = &xml[start..];
    let body = &body[..body.find("</interface>").unwrap()];
    let at = body
        .find(&format!(r#"<method name="{}">"#, v.member))
        .unwrap_or_else(|| panic!("{}.{}: no such method in the XML", v.interface, v.member));
    let open = body[..at].rfind("<!--").unwrap();
    let close = open + body[open..].find("-->").unwrap();
    assert!(close < at, "{}: no comment right above it", v.member);
    body[open + 4..close]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// "`name` (T…" pairs of a comment: the options it documents.
fn backticked(c: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut rest = c;
    while let Some(i) = rest.find('`') {
        let after = &rest[i + 1..];
        let Some(j) = after.find('`') else { break };
        let name = &after[..j];
        let tail = &after[j + 1..];
        if let Some(t) = tail.strip_prefix(" (") {
            let sig: String = t
                .chars()
                .take_while(|c| c.is_ascii_alphabetic() || "{}".contains(*c))
                .collect();
            let next = t[sig.len()..].chars().next();
            if !sig.is_empty() && matches!(next, Some(',' | ':' | ')')) {
                out.insert((name.to_string(), sig));
            }
        }
        rest = &after[j + 1..];
    }
    out
}

/// Where a comment documents the options: from `Options` (`filter`:,
/// `options`:) to `Returns`; "" when it documents none.
fn options_text(c: &str) -> &str {
    let Some(i) = ["Options", "`filter`:", "`options`:"]
        .iter()
        .filter_map(|m| c.find(m))
        .min()
    else {
        return "";
    };
    let rest = &c[i..];
    &rest[..rest.find("Returns").unwrap_or(rest.len())]
}

/// `LABEL: name T, name T (...), ... .` of a comment.
fn listed(c: &str, label: &str) -> BTreeSet<(String, String)> {
    let Some(i) = c.find(label) else {
        return BTreeSet::new();
    };
    let list = unbracketed(&c[i + label.len()..]);
    let list = &list[..list.find('.').unwrap_or(list.len())];
    list.split(',')
        .filter_map(|e| {
            let mut w = e.split_whitespace();
            Some((w.next()?.to_string(), w.next()?.to_string()))
        })
        .collect()
}

fn pairs(keys: &[Key]) -> BTreeSet<(String, String)> {
    keys.iter()
        .map(|k| (k.name.to_string(), k.sig.to_string()))
        .collect()
}

fn name(v: &Verb) -> String {
    format!(
        "hlctl {} ({}.{})",
        v.command.join(" "),
        v.interface,
        v.member
    )
}

#[test]
fn every_verb_is_in_the_xml_with_its_keys_and_errors() {
    let xml = xml();
    for v in VERBS {
        let c = comment(&xml, v);
        let mut documented = backticked(options_text(&c));
        let mut declared = pairs(&(v.options)());
        if let Some((kind, params)) = v.params {
            let p = listed(&c, &format!("Params[{kind}]:"));
            assert_eq!(p, pairs(&params()), "{}: Params[{kind}]", name(v));
            declared.extend(p);
            documented.extend(pairs(&params()));
        }
        assert_eq!(documented, declared, "{}: the comment's options", name(v));
        let after = &c[c.find("Errors:").expect("an Errors: line") + 7..];
        let errors: BTreeSet<String> = unbracketed(after)
            .split('.')
            .next()
            .unwrap()
            .split(',')
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
            .collect();
        let want: BTreeSet<String> = v.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors, want, "{}: Errors", name(v));
    }
}

/// The header's authorization entry of `Interface.Member`: its line and
/// the indented lines that continue it.
fn authorization(xml: &str, v: &Verb) -> String {
    let table = &xml[xml.find("Authorization (polkit").unwrap()..xml.find("History:").unwrap()];
    let lines: Vec<&str> = table.lines().collect();
    let head = format!("{}.{}", v.interface, v.member);
    let i = lines
        .iter()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with(&format!("{head} "))
                || (t.starts_with("Manager.") && t.contains(v.member))
        })
        .unwrap_or_else(|| panic!("{}: not in the XML's authorization table", name(v)));
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut entry = lines[i].to_string();
    for l in &lines[i + 1..] {
        if indent(l) <= indent(lines[i]) {
            break;
        }
        entry += l;
    }
    entry
}

#[test]
fn every_action_is_in_the_policy_and_the_authorization_table() {
    let policy = file("polkit/org.hlctl.Daemon1.policy");
    let xml = xml();
    for v in VERBS {
        let entry = authorization(&xml, v);
        for a in v.actions(true) {
            assert!(
                policy.contains(&format!(r#"<action id="{}">"#, a.id())),
                "{}: {} not in the polkit policy",
                name(v),
                a.id()
            );
            assert!(
                entry.contains(a.id()),
                "{}: {} not in {entry}",
                name(v),
                a.id()
            );
        }
        if v.action.is_none() {
            assert!(entry.contains("none"), "{}: {entry}", name(v));
        }
    }
    let bench: BTreeSet<_> = VERBS
        .iter()
        .filter(|v| v.member == "StartBenchmark")
        .map(|v| format!("{:?}", v.actions(true)))
        .collect();
    assert_eq!(bench.len(), 1, "benchmark kinds ask for different actions");
}

/// The subcommand at `words`.
fn command(words: &[&str]) -> clap::Command {
    let mut c = hlctl::cli::args::hlctl_command();
    c.build();
    for w in words {
        c = c
            .find_subcommand(w)
            .unwrap_or_else(|| panic!("no hlctl {}", words.join(" ")))
            .clone();
    }
    c
}

#[test]
fn every_flag_maps_to_a_declared_key_or_is_declared_command_line_only() {
    for v in VERBS {
        let c = command(v.command);
        let flags: BTreeSet<String> = c
            .get_arguments()
            .filter(|a| !a.is_global_set())
            .map(|a| a.get_id().to_string())
            .filter(|id| id != "help" && id != "version")
            .collect();
        let keys = (v.options)()
            .into_iter()
            .chain(v.params.map(|(_, p)| p()).unwrap_or_default());
        let mut mapped: BTreeMap<String, String> = BTreeMap::new();
        for k in keys {
            for f in k.cli {
                mapped.insert(f.to_string(), k.name.to_string());
            }
        }
        for f in &flags {
            assert!(
                mapped.contains_key(f) || v.cli_only.contains(&f.as_str()),
                "{}: flag {f} is neither a declared key's nor declared command-line only",
                name(v)
            );
        }
        for f in mapped
            .keys()
            .map(String::as_str)
            .chain(v.cli_only.iter().copied())
        {
            assert!(
                flags.contains(f),
                "{}: declares flag {f}, clap has {flags:?}",
                name(v)
            );
        }
    }
}

#[test]
fn a_full_options_struct_encodes_to_every_declared_key_and_back() {
    let mut tripped = 0;
    for v in VERBS {
        let Some(trip) = v.round_trip else { continue };
        let produced: BTreeSet<(String, String)> = trip()
            .unwrap_or_else(|e| panic!("{}: {e}", name(v)))
            .into_iter()
            .collect();
        let mut declared = pairs(&(v.options)());
        declared.extend(v.params.map(|(_, p)| pairs(&p())).unwrap_or_default());
        assert_eq!(produced, declared, "{}: encoded keys", name(v));
        tripped += 1;
    }
    // Every job verb has a codec to check; only plain reads may lack one.
    let jobs = VERBS.iter().filter(|v| v.nature != Nature::Method).count();
    assert!(tripped > jobs, "{tripped} round trips for {jobs} job verbs");
}

#[test]
fn each_history_kind_is_stored_by_one_verb_as_list_history_documents() {
    let stored: Vec<Kind> = VERBS.iter().filter_map(|v| v.history).collect();
    let unique: BTreeSet<&str> = stored.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        unique.len(),
        stored.len(),
        "a kind stored by two verbs: {stored:?}"
    );
    let all: BTreeSet<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        unique, all,
        "history kinds without a verb, or verbs without a kind"
    );
    let list_history = VERBS.iter().find(|v| v.member == "ListHistory").unwrap();
    let c = comment(&xml(), list_history);
    let i = c.find("`kind` (s:").unwrap() + 10;
    let documented: BTreeSet<&str> = c[i..i + c[i..].find(')').unwrap()]
        .split(',')
        .map(str::trim)
        .collect();
    assert_eq!(documented, all, "ListHistory's kinds");
}

#[test]
fn the_classes_and_the_interactive_flag_follow_the_errors() {
    for v in VERBS {
        let classes = v.classes();
        assert!(!classes.is_empty(), "{}", name(v));
        if v.nature != Nature::Method {
            assert!(
                classes.contains(&hlctl::class::Class::Failed),
                "{}: {classes:?}",
                name(v)
            );
        }
        // The client lets polkit ask exactly where the method may answer
        // that it would have asked.
        assert_eq!(
            v.interactive,
            v.errors.contains(&"InteractiveAuthorizationRequired"),
            "{}: interactive",
            name(v)
        );
        if v.errors.contains(&"NotAuthorized") {
            assert!(
                classes.contains(&hlctl::class::Class::NotPermitted),
                "{}",
                name(v)
            );
        }
    }
}

#[test]
fn every_method_that_takes_options_and_every_benchmark_kind_is_declared() {
    let xml = xml();
    let mut undeclared = Vec::new();
    for part in xml.split(r#"<interface name="org.hlctl.Daemon1."#).skip(1) {
        let iface = &part[..part.find('"').unwrap()];
        for m in part.split(r#"<method name=""#).skip(1) {
            let member = &m[..m.find('"').unwrap()];
            let body = &m[..m.find("</method>").unwrap()];
            let takes_dict = body.contains(r#"type="a{sv}" direction="in""#);
            let declared = VERBS
                .iter()
                .any(|v| v.interface == iface && v.member == member);
            if takes_dict && !declared {
                undeclared.push(format!("{iface}.{member}"));
            }
        }
    }
    let mut rest = xml.as_str();
    while let Some(i) = rest.find("Params[") {
        let kind = &rest[i + 7..i + 7 + rest[i + 7..].find(']').unwrap()];
        if !VERBS
            .iter()
            .any(|v| v.params.is_some_and(|(k, _)| k == kind))
        {
            undeclared.push(format!("benchmark {kind}"));
        }
        rest = &rest[i + 7..];
    }
    assert!(
        undeclared.is_empty(),
        "in the XML, not declared: {undeclared:?}"
    );
}
