use super::*;

/// A server and a client with a fresh 1024-bit key pair (small: a unit test).
fn pair(padding: Padding, users: &str) -> (tempfile::TempDir, ServerAuth, RsaPublicKey) {
    let dir = tempfile::tempdir().unwrap();
    let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
    let public = RsaPublicKey::from(&key);
    let file = dir.path().join("users.csv");
    std::fs::write(&file, users).unwrap();
    let server = ServerAuth {
        key,
        users: file,
        skew_s: DEFAULT_TIME_SKEW_S,
        padding,
        accepted: Mutex::new(VecDeque::new()),
    };
    (dir, server, public)
}

fn client(key: &RsaPublicKey, user: &str, pwd: &str, padding: Padding) -> ClientAuth {
    ClientAuth {
        username: user.into(),
        password: pwd.into(),
        key: key.clone(),
        padding,
    }
}

#[test]
fn every_refusal_and_the_acceptance() {
    let users = format!("mario,{}\n", users::salted_hash("mario", "rossi"));
    let (_d, server, public) = pair(Padding::Oaep, &users);
    let now = 1_764_000_000;
    let good = client(&public, "mario", "rossi", Padding::Oaep);
    let t = good.token(now).unwrap();
    assert_eq!(server.check(Some(&t), now + 3), Ok("mario".into()));
    assert!(matches!(server.check(Some(&t), now + 4), Err(Refusal::Replayed(u)) if u == "mario"));
    // A fresh token of the same second is another ciphertext: accepted.
    assert!(server.check(Some(&good.token(now).unwrap()), now).is_ok());
    assert!(matches!(
        server.check(Some(&good.token(now - 11).unwrap()), now),
        Err(Refusal::Skew { skew: 11, .. })
    ));
    assert!(matches!(
        server.check(Some(&good.token(now + 11).unwrap()), now),
        Err(Refusal::Skew { skew: -11, .. })
    ));
    let wrong = client(&public, "mario", "verdi", Padding::Oaep);
    assert_eq!(
        server.check(Some(&wrong.token(now).unwrap()), now),
        Err(Refusal::WrongPassword("mario".into()))
    );
    let stranger = client(&public, "luigi", "rossi", Padding::Oaep);
    assert_eq!(
        server.check(Some(&stranger.token(now).unwrap()), now),
        Err(Refusal::UnknownUser("luigi".into()))
    );
    let old_style = client(&public, "mario", "rossi", Padding::Pkcs1);
    assert_eq!(
        server.check(Some(&old_style.token(now).unwrap()), now),
        Err(Refusal::Undecryptable(Padding::Oaep))
    );
    assert_eq!(server.check(None, now), Err(Refusal::NoToken));
    assert_eq!(
        server.check(Some("not base64!"), now),
        Err(Refusal::NoToken)
    );
}

#[test]
fn pkcs1_padding_both_ends() {
    let users = format!("mario,{}\n", users::salted_hash("mario", "rossi"));
    let (_d, server, public) = pair(Padding::Pkcs1, &users);
    let c = client(&public, "mario", "rossi", Padding::Pkcs1);
    assert!(server.check(Some(&c.token(100).unwrap()), 100).is_ok());
}

#[test]
fn credentials_iperf3_cannot_carry_are_refused_before_sending() {
    assert!(check_word("password", "two words").is_err());
    assert!(check_word("user name", "").is_err());
    assert!(check_word("password", "p@ss,w0rd").is_ok());
}
