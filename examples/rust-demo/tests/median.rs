use ministats::median;

#[test]
fn odd_length() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
}

#[test]
fn even_length_averages_the_middle_pair() {
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
}

#[test]
fn single_value() {
    assert_eq!(median(&[7.0]), Some(7.0));
}

#[test]
fn empty_is_none() {
    assert_eq!(median(&[]), None);
}
