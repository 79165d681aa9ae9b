//! The checks against an authenticator made here with ring: what a browser sends, byte for byte, built as WebAuthn
//! says (CBOR attestation, COSE key, authenticator data, signature over it and the client data's hash).

use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _};

use super::*;

const ORIGIN: &str = "https://notes.example.org";

fn party() -> Party {
    Party::of(Some(ORIGIN)).unwrap()
}

enum Key {
    Ec(EcdsaKeyPair),
    Ed(Ed25519KeyPair),
}

/// An authenticator holding one passkey for `rp_id`.
struct Authenticator {
    key: Key,
    id: Vec<u8>,
    counter: u32,
    rp_id: String,
}

impl Authenticator {
    fn es256() -> Authenticator {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
        Authenticator::with(Key::Ec(key))
    }

    fn ed25519() -> Authenticator {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        Authenticator::with(Key::Ed(Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap()))
    }

    fn with(key: Key) -> Authenticator {
        Authenticator {
            key,
            id: vec![7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
            counter: 0,
            rp_id: "notes.example.org".into(),
        }
    }

    fn cose(&self) -> Vec<u8> {
        let int = |i: i64| Value::Integer(i.into());
        let map = match &self.key {
            Key::Ec(key) => {
                let point = key.public_key().as_ref();
                vec![
                    (int(1), int(2)),
                    (int(3), int(-7)),
                    (int(-1), int(1)),
                    (int(-2), Value::Bytes(point[1..33].to_vec())),
                    (int(-3), Value::Bytes(point[33..].to_vec())),
                ]
            }
            Key::Ed(key) => vec![
                (int(1), int(1)),
                (int(3), int(-8)),
                (int(-1), int(6)),
                (int(-2), Value::Bytes(key.public_key().as_ref().to_vec())),
            ],
        };
        let mut out = Vec::new();
        ciborium::into_writer(&Value::Map(map), &mut out).unwrap();
        out
    }

    fn auth_data(&self, flags: u8, attested: bool) -> Vec<u8> {
        let mut data = sha2::Sha256::digest(self.rp_id.as_bytes()).to_vec();
        data.push(flags);
        data.extend_from_slice(&self.counter.to_be_bytes());
        if attested {
            data.extend_from_slice(&[0; 16]);
            data.extend_from_slice(&u16::try_from(self.id.len()).unwrap().to_be_bytes());
            data.extend_from_slice(&self.id);
            data.extend_from_slice(&self.cose());
        }
        data
    }

    fn client_data(kind: &str, challenge: &str, origin: &str) -> Vec<u8> {
        serde_json::json!({ "type": kind, "challenge": challenge, "origin": origin, "crossOrigin": false })
            .to_string()
            .into_bytes()
    }

    /// `navigator.credentials.create`: the client data and the attestation object.
    fn create(&self, challenge: &str) -> (Vec<u8>, Vec<u8>) {
        let attestation = Value::Map(vec![
            (Value::Text("fmt".into()), Value::Text("none".into())),
            (Value::Text("attStmt".into()), Value::Map(vec![])),
            (
                Value::Text("authData".into()),
                Value::Bytes(self.auth_data(USER_PRESENT | USER_VERIFIED | ATTESTED, true)),
            ),
        ]);
        let mut out = Vec::new();
        ciborium::into_writer(&attestation, &mut out).unwrap();
        (Authenticator::client_data("webauthn.create", challenge, ORIGIN), out)
    }

    /// `navigator.credentials.get`: the client data, the authenticator's data and the signature.
    fn get(&mut self, challenge: &str, origin: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        self.counter += 1;
        let client = Authenticator::client_data("webauthn.get", challenge, origin);
        let data = self.auth_data(USER_PRESENT | USER_VERIFIED, false);
        let mut signed = data.clone();
        signed.extend_from_slice(&sha2::Sha256::digest(&client));
        let signature = match &self.key {
            Key::Ec(key) => key.sign(&SystemRandom::new(), &signed).unwrap().as_ref().to_vec(),
            Key::Ed(key) => key.sign(&signed).as_ref().to_vec(),
        };
        (client, data, signature)
    }
}

fn added(authenticator: &Authenticator, challenges: &Challenges) -> Passkey {
    let purpose = Purpose::Add("device-1".into());
    let challenge = challenges.make(&purpose).unwrap();
    let (client, attestation) = authenticator.create(&challenge);
    let made = registration(&party(), challenges, &purpose, &authenticator.id, &client, &attestation).unwrap();
    assert_eq!(made.id, authenticator.id);
    Passkey {
        id: b64(&made.id),
        key: made.key,
        sign_count: made.sign_count,
        origin: ORIGIN.into(),
        added: 0,
    }
}

#[test]
fn a_passkey_made_then_signs_in_with_each_kind_of_key() {
    for mut authenticator in [Authenticator::es256(), Authenticator::ed25519()] {
        let challenges = Challenges::new().unwrap();
        let made = added(&authenticator, &challenges);
        let challenge = challenges.make(&Purpose::SignIn).unwrap();
        let (client, data, signature) = authenticator.get(&challenge, ORIGIN);
        let count = assertion(&party(), &challenges, &made, &client, &data, &signature).unwrap();
        assert_eq!(count, 1);
        // The same answer again: its challenge is used up.
        let again = assertion(&party(), &challenges, &made, &client, &data, &signature);
        assert!(again.unwrap_err().0.contains("too old or was not made here"));
    }
}

#[test]
fn a_wrong_signature_origin_site_or_purpose_is_refused() {
    let mut authenticator = Authenticator::es256();
    let challenges = Challenges::new().unwrap();
    let made = added(&authenticator, &challenges);
    let attempt = |authenticator: &mut Authenticator, origin: &str, spoil: fn(&mut Vec<u8>, &mut Vec<u8>)| {
        let challenge = challenges.make(&Purpose::SignIn).unwrap();
        let (client, mut data, mut signature) = authenticator.get(&challenge, origin);
        spoil(&mut data, &mut signature);
        assertion(&party(), &challenges, &made, &client, &data, &signature).map_err(|e| e.0)
    };
    let nothing = |_: &mut Vec<u8>, _: &mut Vec<u8>| {};
    assert!(attempt(&mut authenticator, ORIGIN, nothing).is_ok());
    let flipped = |_: &mut Vec<u8>, signature: &mut Vec<u8>| {
        let last = signature.len() - 1;
        signature[last] ^= 1;
    };
    assert!(
        attempt(&mut authenticator, ORIGIN, flipped)
            .unwrap_err()
            .contains("signature is wrong")
    );
    let counter_changed = |data: &mut Vec<u8>, _: &mut Vec<u8>| data[36] ^= 0x10;
    assert!(
        attempt(&mut authenticator, ORIGIN, counter_changed)
            .unwrap_err()
            .contains("signature is wrong")
    );
    assert!(
        attempt(&mut authenticator, "https://evil.example", nothing)
            .unwrap_err()
            .contains("another page")
    );
    // Another page of the same host name (another port): the browser offers the passkey there too, and its answer
    // is right for that page, whose requests name it; the passkey was made on quire's page only.
    let other = "https://notes.example.org:3000";
    let challenge = challenges.make(&Purpose::SignIn).unwrap();
    let (client, data, signature) = authenticator.get(&challenge, other);
    let there = Party::of(Some(other)).unwrap();
    let refused = assertion(&there, &challenges, &made, &client, &data, &signature).unwrap_err();
    assert!(
        refused.0.contains("signs in at https://notes.example.org only"),
        "{refused}"
    );
    let absent = |data: &mut Vec<u8>, _: &mut Vec<u8>| data[32] &= !USER_PRESENT;
    assert!(
        attempt(&mut authenticator, ORIGIN, absent)
            .unwrap_err()
            .contains("someone was there")
    );
    let unverified = |data: &mut Vec<u8>, _: &mut Vec<u8>| data[32] &= !USER_VERIFIED;
    assert!(
        attempt(&mut authenticator, ORIGIN, unverified)
            .unwrap_err()
            .contains("who is there")
    );
    authenticator.rp_id = "example.org".into();
    assert!(
        attempt(&mut authenticator, ORIGIN, nothing)
            .unwrap_err()
            .contains("another site")
    );

    // A challenge made to add a passkey does not sign in, nor one made for another device add to this one.
    let adding = challenges.make(&Purpose::Add("device-2".into())).unwrap();
    let (client, data, signature) = authenticator.get(&adding, ORIGIN);
    assert!(assertion(&party(), &challenges, &made, &client, &data, &signature).is_err());
    let challenge = challenges.make(&Purpose::Add("device-2".into())).unwrap();
    let (client, attestation) = authenticator.create(&challenge);
    let mine = Purpose::Add("device-1".into());
    assert!(registration(&party(), &challenges, &mine, &authenticator.id, &client, &attestation).is_err());
}

#[test]
fn a_damaged_attestation_is_refused_without_a_panic() {
    let authenticator = Authenticator::es256();
    let challenges = Challenges::new().unwrap();
    let purpose = Purpose::Add("device-1".into());
    let (_, attestation) = authenticator.create("x");
    for cut in [0, 1, 10, 40, attestation.len() / 2, attestation.len() - 1] {
        let challenge = challenges.make(&purpose).unwrap();
        let (client, _) = authenticator.create(&challenge);
        let result = registration(
            &party(),
            &challenges,
            &purpose,
            &authenticator.id,
            &client,
            &attestation[..cut],
        );
        assert!(result.is_err(), "cut at {cut}");
    }
    let challenge = challenges.make(&purpose).unwrap();
    let (client, attestation) = authenticator.create(&challenge);
    let other_id = [9u8; 16];
    assert!(registration(&party(), &challenges, &purpose, &other_id, &client, &attestation).is_err());
}

#[test]
fn a_passkey_needs_a_host_name() {
    assert_eq!(Party::of(Some("http://localhost:8080")).unwrap().rp_id, "localhost");
    assert_eq!(
        Party::of(Some("https://Notes.Example.org")).unwrap().rp_id,
        "notes.example.org"
    );
    for origin in ["https://192.168.1.5:8443", "https://[::1]:8443", "http://127.0.0.1"] {
        assert!(
            Party::of(Some(origin)).unwrap_err().0.contains("IP address"),
            "{origin}"
        );
    }
    assert!(Party::of(None).is_err());
}
