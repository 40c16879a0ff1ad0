use super::*;

fn levels() -> Vec<String> {
    ["zone", "block", "rack", "host"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn req(mode: PlacementMode, slices: &[(&str, u32)], count: u32) -> PodSetRequest {
    let mut r = PodSetRequest::new("ps", "f", count, ResourceList::new(), mode);
    r.slices = slices
        .iter()
        .map(|(l, s)| SliceLayer {
            level: l.to_string(),
            size: *s,
        })
        .collect();
    r
}

#[test]
fn main_level_follows_the_mode() {
    let at = |mode, slices: &[(&str, u32)]| resolve(&req(mode, slices, 8), "t", &levels()).unwrap();
    let required = at(PlacementMode::Required("rack".into()), &[]);
    assert_eq!(
        (required.main_level, required.required, required.algorithm),
        (2, true, Algorithm::BestFit)
    );
    let preferred = at(PlacementMode::Preferred("block".into()), &[]);
    assert_eq!((preferred.main_level, preferred.climbs), (1, true));
    let unconstrained = at(PlacementMode::Unconstrained, &[]);
    assert_eq!(
        (unconstrained.main_level, unconstrained.algorithm),
        (3, Algorithm::LeastFree)
    );
    let slice_only = at(PlacementMode::Implied, &[("rack", 4)]);
    assert_eq!(
        (slice_only.main_level, slice_only.algorithm),
        (0, Algorithm::LeastFree)
    );
}

#[test]
fn units_follow_the_slice_layers() {
    let r = resolve(
        &req(
            PlacementMode::Required("zone".into()),
            &[("block", 8), ("rack", 4)],
            16,
        ),
        "t",
        &levels(),
    )
    .unwrap();
    assert_eq!(r.unit, vec![8, 8, 4, 1]);
    assert_eq!(r.total_units, 2);
}

#[test]
fn bad_layers_are_refused() {
    let bad = |slices: &[(&str, u32)], count| {
        resolve(
            &req(PlacementMode::Required("block".into()), slices, count),
            "t",
            &levels(),
        )
    };
    assert!(matches!(
        bad(&[("rack", 4), ("rack", 2)], 8),
        Err(RequestError::LayerOrder { index: 1, .. })
    ));
    assert!(matches!(
        bad(&[("rack", 0)], 8),
        Err(RequestError::ZeroSize { index: 0, .. })
    ));
    assert!(matches!(
        bad(&[("rack", 4), ("host", 2), ("host", 1), ("host", 1)], 8),
        Err(RequestError::TooManyLayers { count: 4, .. })
    ));
    assert!(matches!(
        bad(&[("zone", 4)], 8),
        Err(RequestError::SliceAboveMain { .. })
    ));
}
