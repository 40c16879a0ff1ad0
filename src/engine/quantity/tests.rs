use super::*;

fn q(s: &str) -> Quantity {
    s.parse().unwrap()
}

#[test]
fn parses_every_suffix_family() {
    assert_eq!(q("2"), Quantity::from_units(2));
    assert_eq!(q("1500m"), Quantity::from_milli(1500));
    assert_eq!(q("1.5"), Quantity::from_milli(1500));
    assert_eq!(q("64Gi"), Quantity::from_units(64 << 30));
    assert_eq!(q("1k"), Quantity::from_units(1000));
    assert_eq!(q("1e3"), Quantity::from_units(1000));
    assert_eq!(q("1E-3"), Quantity::from_milli(1));
    assert_eq!(q("5n"), Quantity::from_nanos(5));
    assert_eq!(q("-2"), Quantity::from_units(-2));
    assert_eq!(q(".5"), Quantity::from_milli(500));
    assert_eq!(q("1Ei"), Quantity::from_nanos((1i128 << 60) * NANO));
}

#[test]
fn rounds_sub_nano_precision_up() {
    assert_eq!(q("0.1n"), Quantity::from_nanos(1));
    assert_eq!(q("1e-30"), Quantity::from_nanos(1));
}

#[test]
fn rejects_malformed_input() {
    assert_eq!("".parse::<Quantity>(), Err(QuantityError::Empty));
    assert!(matches!(
        "abc".parse::<Quantity>(),
        Err(QuantityError::NoDigits(_))
    ));
    assert!(matches!(
        "1.2.3".parse::<Quantity>(),
        Err(QuantityError::NoDigits(_))
    ));
    assert!(matches!(
        "5Qi".parse::<Quantity>(),
        Err(QuantityError::UnknownSuffix(_))
    ));
    assert!(matches!(
        "1e".parse::<Quantity>(),
        Err(QuantityError::UnknownSuffix(_))
    ));
    assert!(matches!(
        "9".repeat(60).parse::<Quantity>(),
        Err(QuantityError::Overflow(_))
    ));
}

#[test]
fn rejects_what_kubernetes_rejects_beyond_2_pow_63_units() {
    assert_eq!(q("9223372036854775807"), Quantity::from_units(i64::MAX));
    assert_eq!(q("-9223372036854775807"), Quantity::from_units(-i64::MAX));
    for beyond in [
        "9223372036854775808",
        "-9223372036854775808",
        "9223372036854775807001m",
        "8Ei",
        "1e19",
        "10E",
        "1e60",
    ] {
        let error = beyond.parse::<Quantity>().unwrap_err();
        assert_eq!(error, QuantityError::Overflow(beyond.into()), "{beyond}");
    }
    assert_eq!(q("7Ei"), Quantity::from_units(7 << 60));
}

#[test]
fn the_largest_quantities_add_subtract_and_multiply_without_overflow() {
    let most = q("9223372036854775807");
    let many = (0..1000).fold(Quantity::ZERO, |sum, _| sum + most);
    assert_eq!(many, Quantity::from_nanos(LIMIT * 1000));
    assert_eq!(most.saturating_mul(i64::MAX), Quantity::MAX);
    assert_eq!(
        -most - most - Quantity::MAX,
        -Quantity::MAX - Quantity::from_nanos(1)
    );
    assert_eq!(most.div_floor(Quantity::from_nanos(1)), Some(LIMIT));
}

#[test]
fn formats_canonically_and_round_trips() {
    for s in ["0", "3", "1500m", "250u", "7n", "-2", "68719476736"] {
        assert_eq!(q(s).to_string(), s);
        assert_eq!(q(&q(s).to_string()), q(s));
    }
    assert_eq!(q("64Gi").to_string(), "68719476736");
}

#[test]
fn formats_binary_amounts_with_the_largest_exact_suffix() {
    assert_eq!(q("800Mi").to_binary_si_string(), "800Mi");
    assert_eq!(q("1Gi").to_binary_si_string(), "1Gi");
    assert_eq!(q("1000").to_binary_si_string(), "1000");
    assert_eq!(q("1536Ki").to_binary_si_string(), "1536Ki");
    assert_eq!(q("500m").to_binary_si_string(), "500m");
}

#[test]
fn arithmetic_saturates_and_divides() {
    assert_eq!(Quantity::MAX + Quantity::from_units(1), Quantity::MAX);
    assert_eq!(q("3").div_floor(q("1500m")), Some(2));
    assert_eq!(q("3").div_floor(Quantity::ZERO), None);
    assert_eq!((q("1") - q("2")).clamp_non_negative(), Quantity::ZERO);
}

#[test]
fn a_share_of_pods_rounds_each_pod_down_as_kueue_does() {
    // 1 cpu over 3 pods is 333m a pod in Kueue's milli-units: 333m for one pod, 666m for two.
    assert_eq!(q("1").per_pod_times("cpu", 3, 1), q("333m"));
    assert_eq!(q("1").per_pod_times("cpu", 3, 2), q("666m"));
    // Other resources count whole units: 10 bytes over 4 pods is 2 a pod.
    assert_eq!(q("10").per_pod_times("memory", 4, 3), q("6"));
    assert_eq!(q("4").per_pod_times("cpu", 4, 0), Quantity::ZERO);
    assert_eq!(q("4").per_pod_times("cpu", 0, 1), q("4"));
}

#[test]
fn a_product_is_exact_rounds_finer_precision_up_and_stays_within_the_quantity_bound() {
    let q = |s: &str| s.parse::<Quantity>().expect("a quantity");
    assert_eq!(q("2").times(q("1500m")), q("3"));
    assert_eq!(q("1024").times(q("500m")), q("512"));
    assert_eq!(q("3").times(q("-1")), q("-3"));
    assert_eq!(
        q("1n").times(q("1n")),
        q("1n"),
        "a nano of a nano rounds up"
    );
    assert_eq!(
        q("10000000000").times(q("10000000000")),
        q("9223372036854775807")
    );
    assert_eq!(
        q("-10000000000").times(q("10000000000")),
        q("-9223372036854775807")
    );
}
