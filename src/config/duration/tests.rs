use super::*;

fn parse(text: &str) -> Result<GoDuration, DurationError> {
    text.parse()
}

fn nanos(text: &str) -> i64 {
    parse(text).unwrap().as_nanos()
}

const SECOND: i64 = 1_000_000_000;

#[test]
fn parses_go_forms() {
    assert_eq!(nanos("1h30m"), 5400 * SECOND);
    assert_eq!(nanos("90s"), 90 * SECOND);
    assert_eq!(nanos("0s"), 0);
    assert_eq!(nanos("0"), 0);
    assert_eq!(nanos("-0"), 0);
    assert_eq!(nanos("500ms"), SECOND / 2);
    assert_eq!(nanos("1.5h"), 5400 * SECOND);
    assert_eq!(nanos(".5s"), SECOND / 2);
    assert_eq!(nanos("1.s"), SECOND);
    assert_eq!(nanos("-5m"), -300 * SECOND);
    assert_eq!(nanos("+5m"), 300 * SECOND);
    assert_eq!(nanos("2h45m30.5s"), 9930 * SECOND + SECOND / 2);
    assert_eq!(nanos("1us"), 1_000);
    assert_eq!(nanos("1\u{b5}s"), 1_000);
    assert_eq!(nanos("1\u{3bc}s"), 1_000);
    assert_eq!(nanos("7ns"), 7);
    assert_eq!(nanos("2562047h47m16.854775807s"), i64::MAX);
    assert_eq!(nanos("-2562047h47m16.854775808s"), i64::MIN);
}

#[test]
fn rejects_what_go_rejects() {
    assert_eq!(parse(""), Err(DurationError::Invalid(String::new())));
    assert_eq!(parse("-"), Err(DurationError::Invalid("-".into())));
    assert_eq!(parse("."), Err(DurationError::Invalid(".".into())));
    assert_eq!(parse("s"), Err(DurationError::Invalid("s".into())));
    assert_eq!(parse("1"), Err(DurationError::MissingUnit("1".into())));
    assert_eq!(parse("300"), Err(DurationError::MissingUnit("300".into())));
    assert_eq!(
        parse("5d"),
        Err(DurationError::UnknownUnit {
            unit: "d".into(),
            text: "5d".into()
        })
    );
    assert!(matches!(
        parse("1h 30m"),
        Err(DurationError::UnknownUnit { .. })
    ));
    assert_eq!(
        parse("2562047h47m16.854775808s"),
        Err(DurationError::Invalid("2562047h47m16.854775808s".into()))
    );
    assert!(parse("9999999999999999999h").is_err());
}

#[test]
fn displays_like_go() {
    let shown = |text: &str| parse(text).unwrap().to_string();
    assert_eq!(shown("0"), "0s");
    assert_eq!(shown("90m"), "1h30m0s");
    assert_eq!(shown("90s"), "1m30s");
    assert_eq!(shown("1.5s"), "1.5s");
    assert_eq!(shown("500ms"), "500ms");
    assert_eq!(shown("1500us"), "1.5ms");
    assert_eq!(shown("1500ns"), "1.5\u{b5}s");
    assert_eq!(shown("-5m"), "-5m0s");
    assert_eq!(shown("72h"), "72h0m0s");
}

#[test]
fn converts_to_std_only_when_not_negative() {
    assert_eq!(parse("1m").unwrap().to_std(), Some(Duration::from_secs(60)));
    assert_eq!(parse("-1s").unwrap().to_std(), None);
}

#[test]
fn deserializes_from_strings_only() {
    let from_yaml = |text: &str| yaml_serde::from_str::<GoDuration>(text);
    assert_eq!(from_yaml("15s").unwrap(), GoDuration::from_secs(15));
    assert!(from_yaml("15").is_err());
    assert!(from_yaml("[1]").is_err());
}
