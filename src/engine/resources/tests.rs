use super::*;

#[test]
fn interning_is_stable_and_dense() {
    let mut names = Interner::default();
    let cpu = names.resource("cpu");
    let mem = names.resource("memory");
    assert_eq!(names.resource("cpu"), cpu);
    let spot = names.flavor("spot");
    let a = names.pair(spot, cpu);
    let b = names.pair(spot, mem);
    assert_eq!((a, b), (FlavorResource(0), FlavorResource(1)));
    assert_eq!(names.pair(spot, cpu), a);
    assert_eq!(names.pair_of(b), (spot, mem));
    assert_eq!(names.resource_name(mem), "memory");
    assert_eq!(names.find_pair(spot, mem), Some(b));
    assert_eq!(names.find_flavor("on-demand"), None);
}

#[test]
fn sparse_amounts_stay_sorted_and_merge() {
    let mut amounts = FlavorResourceAmounts::new();
    add_amount(&mut amounts, FlavorResource(3), Quantity::from_units(1));
    add_amount(&mut amounts, FlavorResource(1), Quantity::from_units(2));
    add_amount(&mut amounts, FlavorResource(3), Quantity::from_units(4));
    assert_eq!(
        amounts,
        vec![
            (FlavorResource(1), Quantity::from_units(2)),
            (FlavorResource(3), Quantity::from_units(5))
        ]
    );
    assert_eq!(
        amount_of(&amounts, FlavorResource(3)),
        Quantity::from_units(5)
    );
    assert_eq!(amount_of(&amounts, FlavorResource(2)), Quantity::ZERO);
}
