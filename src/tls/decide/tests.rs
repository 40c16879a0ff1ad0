use std::time::Duration;

use super::*;
use crate::tls::material::Flaw;
use crate::tls::testing::{at, decide_data, issued, next_material, settings, t0, verify_as_client};

fn with(data: &SecretData, key: &str, value: &[u8]) -> SecretData {
    let mut data = data.clone();
    data.insert(key.into(), value.to_vec());
    data
}

fn unusable_key(verdict: &Verdict) -> Option<&'static str> {
    let why = match verdict {
        Verdict::Reuse(_) => return None,
        Verdict::Renew { why, .. } | Verdict::Regenerate { why, .. } => why,
    };
    match why {
        Flaw::Unusable { key, .. } => Some(key),
        _ => None,
    }
}

#[test]
fn an_empty_secret_gets_a_new_ca() {
    let verdict = decide_data(&SecretData::new(), t0(), &settings());
    let Verdict::Regenerate { previous, why } = verdict else {
        panic!("{verdict:?}");
    };
    assert!(previous.is_empty());
    assert_eq!(why, Flaw::Missing(CA_CRT));
}

#[test]
fn a_restart_reuses_valid_certificates_and_writes_nothing() {
    let settings = settings();
    let stored = issued(t0(), &settings);
    let verdict = decide_data(&stored.data, at(1), &settings);
    let Verdict::Reuse(reused) = verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(reused.ca, stored.ca);
    assert_eq!(reused.serving.leaf, stored.serving.leaf);
    assert!(reused.is_stored_in(&stored.data));
}

#[test]
fn the_serving_certificate_is_renewed_with_a_quarter_of_its_lifetime_left() {
    let settings = settings();
    let stored = issued(t0(), &settings);
    assert!(matches!(
        decide_data(&stored.data, at(5), &settings),
        Verdict::Reuse(_)
    ));
    let verdict = decide_data(&stored.data, at(7), &settings);
    let Verdict::Renew { why, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(*why, Flaw::ServingExpiring(at(8)));
    let renewed = carry_out(verdict, &settings, at(7)).unwrap();
    assert_eq!(renewed.ca, stored.ca);
    assert_eq!(renewed.data[CA_CRT], stored.data[CA_CRT]);
    assert_eq!(renewed.data[CA_KEY], stored.data[CA_KEY]);
    assert_ne!(renewed.data[TLS_KEY], stored.data[TLS_KEY]);
    assert_eq!(renewed.serving.leaf.not_after, at(15));
}

#[test]
fn a_new_name_renews_the_serving_certificate_and_a_dropped_one_does_not() {
    let plain = settings();
    let mut wider = settings();
    wider.extra_dns_names = vec!["localhost".into()];
    let stored = issued(t0(), &plain);
    let verdict = decide_data(&stored.data, at(1), &wider);
    let Verdict::Renew { why, .. } = verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(why, Flaw::NameNotCovered("localhost".into()));
    // During a rolling update, replicas still on the narrower settings keep the wider certificate.
    let stored = issued(t0(), &wider);
    assert!(matches!(
        decide_data(&stored.data, at(1), &plain),
        Verdict::Reuse(_)
    ));
}

#[test]
fn the_ca_is_replaced_before_a_serving_certificate_would_outlive_it() {
    let settings = settings();
    let stored = issued(t0(), &settings);
    let verdict = decide_data(&stored.data, at(31), &settings);
    let Verdict::Regenerate { previous, why } = &verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(*why, Flaw::CaExpiring(at(40)));
    assert_eq!(*previous, std::slice::from_ref(&stored.ca));
    let rotated = carry_out(verdict, &settings, at(31)).unwrap();
    assert_ne!(rotated.ca.der, stored.ca.der);
    let trust: Vec<_> = rotated.trust().into_iter().cloned().collect();
    assert_eq!(trust, [rotated.ca.clone(), stored.ca.clone()]);
    let bundle = crate::tls::material::parse_bundle(&rotated.data[CA_CRT]).unwrap();
    assert_eq!(bundle, trust);
}

#[test]
fn an_earlier_ca_is_trusted_until_a_certificate_it_signed_could_have_expired() {
    let settings = settings();
    let first = issued(t0(), &settings);
    let rotated = next_material(&first.data, at(31), &settings);
    // The old CA's last serving certificate lives until 31 + 8 at most.
    assert_eq!(retired_at(&first.ca, &rotated.ca, &settings), at(40));
    let renewed = next_material(&rotated.data, at(38), &settings);
    assert_ne!(renewed.serving.leaf, rotated.serving.leaf);
    assert_eq!(renewed.previous, std::slice::from_ref(&first.ca));
    let verdict = decide_data(&renewed.data, at(39), &settings);
    let Verdict::Reuse(kept) = verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(kept.previous, std::slice::from_ref(&first.ca));
    assert!(kept.is_stored_in(&renewed.data));
    let verdict = decide_data(&renewed.data, at(40), &settings);
    let Verdict::Reuse(tidied) = verdict else {
        panic!("{verdict:?}");
    };
    assert!(tidied.previous.is_empty());
    assert!(!tidied.is_stored_in(&renewed.data));
    assert_eq!(tidied.data[CA_CRT], rotated.ca.pem().into_bytes());
    assert_eq!(tidied.data[TLS_CRT], renewed.data[TLS_CRT]);
}

#[test]
fn unusable_values_are_flaws_and_are_replaced() {
    let settings = settings();
    let stored = issued(t0(), &settings);
    let stranger = issued(t0(), &settings);
    let now = at(1);

    let cases: [(&str, &[u8], &str); 6] = [
        (CA_CRT, b"not pem", "Regenerate"),
        (CA_CRT, &stored.data[TLS_CRT], "Regenerate"),
        (TLS_KEY, b"\xff\xfe", "Renew"),
        (TLS_KEY, &stranger.data[TLS_KEY], "Renew"),
        (
            TLS_CRT,
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "Renew",
        ),
        (TLS_CRT, &stored.data[CA_KEY], "Renew"),
    ];
    for (key, value, expected) in cases {
        let verdict = decide_data(&with(&stored.data, key, value), now, &settings);
        let kind = match &verdict {
            Verdict::Reuse(_) => "Reuse",
            Verdict::Renew { .. } => "Renew",
            Verdict::Regenerate { .. } => "Regenerate",
        };
        assert_eq!((key, kind), (key, expected), "{verdict:?}");
        assert_eq!(unusable_key(&verdict), Some(key), "{verdict:?}");
        let repaired = carry_out(verdict, &settings, now).unwrap();
        assert!(matches!(
            decide_data(&repaired.data, now, &settings),
            Verdict::Reuse(_)
        ));
    }
}

#[test]
fn a_serving_certificate_from_another_ca_is_renewed() {
    let settings = settings();
    let stored = issued(t0(), &settings);
    let stranger = issued(t0(), &settings);
    let mut data = with(&stored.data, TLS_CRT, &stranger.data[TLS_CRT]);
    data.insert(TLS_KEY.into(), stranger.data[TLS_KEY].clone());
    let verdict = decide_data(&data, at(1), &settings);
    assert!(
        matches!(
            &verdict,
            Verdict::Renew {
                why: Flaw::Untrusted(_),
                ..
            }
        ),
        "{verdict:?}"
    );
}

#[test]
fn a_ca_key_that_cannot_sign_is_kept_until_a_renewal_needs_it() {
    let settings = settings();
    let stored = issued(t0(), &settings);
    let stranger = issued(t0(), &settings);
    let data = with(&stored.data, CA_KEY, &stranger.data[CA_KEY]);
    let verdict = decide_data(&data, at(1), &settings);
    let Verdict::Reuse(reused) = verdict else {
        panic!("{verdict:?}");
    };
    assert!(reused.is_stored_in(&data));
    let verdict = decide_data(&data, at(7), &settings);
    let Verdict::Regenerate { previous, why } = verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(previous, std::slice::from_ref(&stored.ca));
    let Flaw::CannotRenew { serving, ca_key } = why else {
        panic!("{why:?}");
    };
    assert_eq!(*serving, Flaw::ServingExpiring(at(8)));
    assert!(matches!(*ca_key, Flaw::Unusable { key: CA_KEY, .. }));
}

/// A Secret written by Kueue's rotator: RSA keys in PKCS#1 form, one SAN `<svc>.<ns>.svc`.
fn kueue_secret() -> SecretData {
    SecretData::from([
        (
            CA_CRT.into(),
            include_bytes!("../testdata/kueue/ca.crt").to_vec(),
        ),
        (
            CA_KEY.into(),
            include_bytes!("../testdata/kueue/ca.key").to_vec(),
        ),
        (
            TLS_CRT.into(),
            include_bytes!("../testdata/kueue/tls.crt").to_vec(),
        ),
        (
            TLS_KEY.into(),
            include_bytes!("../testdata/kueue/tls.key").to_vec(),
        ),
    ])
}

#[test]
fn kueue_certificates_are_served_as_long_as_they_fit_and_their_ca_stays_trusted_after() {
    let data = kueue_secret();
    let parsed = Parsed::from_data(&data);
    let kueue_ca = parsed.ca.clone().unwrap();
    let now = later(kueue_ca.not_before, Duration::from_secs(24 * 60 * 60));
    assert!(parsed.serving.is_ok(), "{:?}", parsed.serving);
    assert!(matches!(
        parsed.ca_key,
        Err(Flaw::Unusable { key: CA_KEY, .. })
    ));

    let mut kueue_names = crate::tls::TlsSettings::kueue(
        "kueue-system",
        "kueue-webhook-service",
        "kueue-webhook-server-cert",
    );
    kueue_names.lifetimes.serving = Duration::from_secs(365 * 24 * 60 * 60);
    // kuota also names `<svc>.<ns>.svc.cluster.local`, which Kueue's certificate lacks.
    let verdict = decide_data(&data, now, &kueue_names);
    let Verdict::Regenerate { previous, why } = &verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(*previous, std::slice::from_ref(&kueue_ca));
    assert!(matches!(why, Flaw::CannotRenew { .. }), "{why:?}");
    let replaced = carry_out(verdict, &kueue_names, now).unwrap();
    assert!(replaced.trust().contains(&&kueue_ca));
    for name in kueue_names.dns_names() {
        verify_as_client(&replaced, &[&replaced.ca], &name, now).unwrap();
    }
}

#[test]
fn rotation_keeps_every_certificate_in_use_trusted() {
    let settings = settings();
    let name = &settings.dns_names()[0];
    let mut data = SecretData::new();
    let mut served: Option<Material> = None;
    let (mut renewals, mut cas) = (0, 0);
    for second in 0..200 {
        let now = at(second);
        let material = next_material(&data, now, &settings);
        verify_as_client(&material, &material.trust(), name, now)
            .unwrap_or_else(|e| panic!("at {second}s the new certificate: {e}"));
        if let Some(before) = &served {
            if before.serving.leaf.is_valid_at(now) {
                verify_as_client(before, &material.trust(), name, now)
                    .unwrap_or_else(|e| panic!("at {second}s the one served before: {e}"));
            }
            renewals += usize::from(before.serving.leaf != material.serving.leaf);
            cas += usize::from(before.ca != material.ca);
        }
        assert!(material.trust().len() <= 2, "at {second}s");
        assert!(matches!(
            decide_data(&material.data, now, &settings),
            Verdict::Reuse(_)
        ));
        data.extend(material.data.clone());
        served = Some(material);
    }
    assert!(cas >= 5, "{cas} CAs");
    assert!(renewals >= 25, "{renewals} renewals");
}

#[test]
fn the_next_look_is_at_the_next_renewal_or_retirement_or_after_the_interval() {
    let settings = settings();
    let fresh = issued(t0(), &settings);
    // Serving renewal at 8 - 2; the CA's at 40 - 10; the interval ends at 30.
    assert_eq!(next_check(&fresh, t0(), &settings), at(6));

    let first = issued(t0(), &settings);
    let rotated = next_material(&first.data, at(31), &settings);
    let renewed = next_material(&rotated.data, at(38), &settings);
    // Renewal at 46 - 2, the first CA retires at 40.
    assert_eq!(next_check(&renewed, at(38), &settings), at(40));

    let mut long = settings.clone();
    long.lifetimes = crate::tls::Lifetimes::default();
    let fresh = issued(t0(), &long);
    assert_eq!(
        next_check(&fresh, t0(), &long),
        later(t0(), long.lifetimes.check_interval)
    );
    // Never sooner than a second, whatever the clock says.
    assert_eq!(
        next_check(&fresh, at(400 * 24 * 3600), &long),
        at(400 * 24 * 3600 + 1)
    );
}

#[test]
fn a_garbled_block_in_the_ca_bundle_is_dropped_and_the_rest_kept() {
    let settings = settings();
    let first = issued(t0(), &settings);
    let rotated = next_material(&first.data, at(31), &settings);
    let garbled = format!(
        "{}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n{}",
        rotated.ca.pem(),
        first.ca.pem()
    );
    let data = with(&rotated.data, CA_CRT, garbled.as_bytes());
    let verdict = decide_data(&data, at(32), &settings);
    let Verdict::Reuse(kept) = verdict else {
        panic!("{verdict:?}");
    };
    assert_eq!(kept.ca, rotated.ca);
    assert_eq!(kept.previous, std::slice::from_ref(&first.ca));
    assert_eq!(kept.data[CA_CRT], rotated.data[CA_CRT]);
    assert!(!kept.is_stored_in(&data));
}
