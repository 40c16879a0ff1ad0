use super::*;

fn levels() -> Vec<String> {
    [
        "example.com/topology-block",
        "example.com/topology-rack",
        HOSTNAME_LABEL,
    ]
    .map(String::from)
    .to_vec()
}

fn path(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

#[test]
fn counts_domains_per_level_and_the_lowest_shared_level() {
    let paths = [
        path(&["b1", "r1", "h1"]),
        path(&["b1", "r1", "h2"]),
        path(&["b1", "r2", "h1"]),
    ];
    let quality = PlacementQuality::from_paths(levels(), paths.iter().map(Vec::as_slice));
    assert_eq!(quality.domains_per_level, vec![1, 2, 3]);
    assert_eq!(quality.lowest_common_level(), Some(0));
    assert_eq!(
        quality.to_string(),
        "blocks 1, racks 2, hosts 3; lowest common level: block"
    );
    let one = PlacementQuality::from_paths(levels(), [paths[0].as_slice()]);
    assert_eq!(one.lowest_common_level(), Some(2));
    let spread = [path(&["b1", "r1", "h1"]), path(&["b2", "r1", "h1"])];
    let apart = PlacementQuality::from_paths(levels(), spread.iter().map(Vec::as_slice));
    assert_eq!(apart.domains_per_level, vec![2, 2, 2]);
    assert_eq!(apart.lowest_common_level(), None);
    assert!(apart.to_string().ends_with("; no common level"));
}

#[test]
fn short_names_drop_prefixes() {
    assert_eq!(
        short_level_name("cloud.provider.com/topology-block"),
        "block"
    );
    assert_eq!(short_level_name("topology.kubernetes.io/zone"), "zone");
    assert_eq!(short_level_name(HOSTNAME_LABEL), "host");
}
