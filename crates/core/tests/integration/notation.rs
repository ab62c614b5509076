//! The text notation of `docs/RULES.md`: `Display` and `parse` are inverse, the
//! notation tolerates whitespace around numbers, and every malformed input
//! is rejected with `Error::Notation` naming the problem.

use mancala_core::{Error, Position, Rules, Variant, MAX_PITS, MAX_STONES};
use proptest::prelude::*;

/// The message of a notation error; fails on success or on another error.
fn notation_error(pits: usize, text: &str) -> String {
    match Position::parse(pits, text) {
        Err(Error::Notation(e)) => e.to_string(),
        Err(other) => panic!("{text:?}: expected a notation error, got {other:?}"),
        Ok(pos) => panic!("{text:?} was accepted as {pos:?}"),
    }
}

/// Asserts that `msg` mentions every one of `needles` (case-insensitive).
fn assert_mentions(msg: &str, needles: &[&str]) {
    let lower = msg.to_lowercase();
    for needle in needles {
        assert!(
            lower.contains(&needle.to_lowercase()),
            "error message {msg:?} does not mention {needle:?}"
        );
    }
}

/// A random board: 1..=8 pits per side, at most `MAX_STONES` stones.
fn board() -> impl Strategy<Value = (usize, Vec<u32>)> {
    (1usize..=MAX_PITS).prop_flat_map(|pits| {
        (
            Just(pits),
            proptest::collection::vec(0u32..=40, 2 * pits)
                .prop_filter("fits on a board", |counts| {
                    counts.iter().sum::<u32>() <= MAX_STONES
                }),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn display_and_parse_round_trip((pits, counts) in board()) {
        let pos = Position::from_counts(pits, &counts).unwrap();
        let text = pos.to_string();
        // The notation is exactly the counts, comma-separated, one slash.
        let expected = format!(
            "{}/{}",
            counts[..pits].iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            counts[pits..].iter().map(u32::to_string).collect::<Vec<_>>().join(",")
        );
        prop_assert_eq!(&text, &expected);
        prop_assert_eq!(Position::parse(pits, &text).unwrap(), pos);
        prop_assert_eq!(text.parse::<Position>().unwrap(), pos);
        let cells: Vec<u32> = pos.cells().iter().map(|&c| c as u32).collect();
        prop_assert_eq!(cells, counts.clone());
        prop_assert_eq!(pos.stones(), counts.iter().sum::<u32>());
        prop_assert_eq!(pos.mover_stones(), counts[..pits].iter().sum::<u32>());
        // Spaces around every number are tolerated.
        let spaced = format!("  {}  ", text.replace(',', " ,  ").replace('/', " / "));
        prop_assert_eq!(Position::parse(pits, &spaced).unwrap(), pos);
        // Flipping twice is the identity; once swaps the rows.
        prop_assert_eq!(pos.flipped().flipped(), pos);
        prop_assert_eq!(pos.flipped().mover_stones(), pos.opponent_stones());
    }
}

#[test]
fn whitespace_is_tolerated() {
    let expected = Position::from_counts(3, &[4, 4, 4, 4, 4, 4]).unwrap();
    assert_eq!(
        Position::parse(3, " 4, 4 ,4/4,4,4 ").unwrap(),
        expected,
        "spaces around numbers"
    );
    assert_eq!(
        Position::parse(3, "\t4 ,4,\t4 / 4,4 ,4\n").unwrap(),
        expected,
        "tabs and a trailing newline"
    );
    assert_eq!(" 4, 4 ,4/4,4,4 ".parse::<Position>().unwrap(), expected);
    let pos = Position::parse(6, "4,4,2,0,0,0/0,0,0,0,0,0").unwrap();
    assert_eq!(pos.stones(), 10);
    assert_eq!(pos.get(2), 2);
    assert_eq!(pos.to_string(), "4,4,2,0,0,0/0,0,0,0,0,0");
}

#[test]
fn wrong_number_of_pits_is_rejected() {
    let msg = notation_error(3, "4,4/4,4,4");
    assert_mentions(&msg, &["mover", "2 pits", "expected 3"]);
    let msg = notation_error(3, "4,4,4/4,4,4,4");
    assert_mentions(&msg, &["opponent", "4 pits", "expected 3"]);
    // A trailing comma is an extra (empty) pit, not silently dropped.
    notation_error(3, "4,4,4,/4,4,4");
    // Six-pit notation read as a four-pit board.
    let msg = notation_error(4, "4,4,4,4,4,4/4,4,4,4,4,4");
    assert_mentions(&msg, &["6 pits", "expected 4"]);
}

#[test]
fn slashes_are_required_exactly_once() {
    let msg = notation_error(3, "4,4,4,4,4,4");
    assert_mentions(&msg, &["'/'"]);
    let msg = notation_error(3, "4,4,4/4,4,4/4,4,4");
    assert_mentions(&msg, &["'/'"]);
    let msg = notation_error(3, "");
    assert_mentions(&msg, &["'/'"]);
    // The same through FromStr, which infers the pits from the first row.
    assert!(matches!(
        "4,4,4".parse::<Position>(),
        Err(Error::Notation(_))
    ));
    assert!(matches!(
        "1,2/3,4/5,6".parse::<Position>(),
        Err(Error::Notation(_))
    ));
}

#[test]
fn bad_counts_are_rejected_and_named() {
    let msg = notation_error(3, "-1,4,4/4,4,4");
    assert_mentions(&msg, &["'-1'", "mover"]);
    let msg = notation_error(3, "4,4,4/4,-2,4");
    assert_mentions(&msg, &["'-2'", "opponent"]);
    let msg = notation_error(3, "4,x,4/4,4,4");
    assert_mentions(&msg, &["'x'", "not a stone count"]);
    let msg = notation_error(3, "4,4.5,4/4,4,4");
    assert_mentions(&msg, &["'4.5'"]);
    let msg = notation_error(3, "4,4 4,4/4,4,4");
    assert_mentions(&msg, &["'4 4'"]);
    let msg = notation_error(3, "4,,4/4,4,4");
    assert_mentions(&msg, &["empty count", "mover"]);
    let msg = notation_error(3, "4,4,4/4,4,");
    assert_mentions(&msg, &["empty count", "opponent"]);
    // Rust's integer parser would take a sign; the notation does not.
    let msg = notation_error(3, "+4,4,4/4,4,4");
    assert_mentions(&msg, &["'+4'", "not a stone count"]);
    // A count beyond u32 is not wrapped around.
    let msg = notation_error(1, "4294967296/0");
    assert_mentions(&msg, &["4294967296"]);
}

#[test]
fn too_many_stones_are_rejected() {
    let msg = notation_error(3, "200,100,0/0,0,0");
    assert_mentions(&msg, &["300", &MAX_STONES.to_string()]);
    // One pit alone over a byte must not be truncated to 256 mod 256 = 0.
    let msg = notation_error(1, "256/0");
    assert_mentions(&msg, &["256"]);
    // Exactly the maximum is fine.
    let pos = Position::parse(2, "255,0/0,0").unwrap();
    assert_eq!(pos.stones(), 255);
    // from_counts enforces the same limits.
    assert!(matches!(
        Position::from_counts(3, &[100, 100, 100, 0, 0, 0]),
        Err(Error::Notation(_))
    ));
    assert!(matches!(
        Position::from_counts(3, &[u32::MAX, 1, 0, 0, 0, 0]),
        Err(Error::Notation(_))
    ));
}

#[test]
fn pits_per_side_out_of_range_are_rejected() {
    let nine = "1,1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,1,1";
    match nine.parse::<Position>() {
        Err(Error::Notation(e)) => assert_mentions(&e.to_string(), &["1..=8", "9"]),
        other => panic!("nine pits per side: {other:?}"),
    }
    assert!(matches!(Position::parse(9, nine), Err(Error::Notation(_))));
    assert!(matches!(Position::parse(0, "/"), Err(Error::Notation(_))));
    assert!(matches!(
        Position::from_counts(0, &[]),
        Err(Error::Notation(_))
    ));
    assert!(matches!(
        Position::from_counts(3, &[1, 2, 3]),
        Err(Error::Notation(_))
    ));
}

#[test]
fn rules_reject_pits_out_of_range() {
    for variant in Variant::ALL {
        for pits in [0usize, 9, 100] {
            match Rules::new(variant, pits) {
                Err(Error::Rules(e)) => assert_mentions(&e.to_string(), &[&pits.to_string()]),
                Err(other) => panic!("{variant} with {pits} pits: unexpected {other:?}"),
                Ok(rules) => panic!("{variant} with {pits} pits accepted: {rules:?}"),
            }
        }
        for pits in 1..=MAX_PITS {
            let rules = Rules::new(variant, pits).unwrap();
            assert_eq!(rules.pits(), pits);
            assert_eq!(rules.variant(), variant);
        }
        assert_eq!(Variant::from_name(variant.name()).unwrap(), variant);
    }
    assert!(matches!(
        Variant::from_name("mancala"),
        Err(Error::Rules(_))
    ));
}

/// The numbers on one line of a picture, in reading order.
fn numbers(line: &str) -> Vec<u32> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

#[test]
fn picture_shows_the_opponent_row_reversed_on_top() {
    let pos = Position::parse(6, "1,2,3,4,5,6/7,8,9,10,11,12").unwrap();
    let picture = pos.picture();
    let lines: Vec<&str> = picture.lines().collect();
    let top = lines
        .iter()
        .position(|l| numbers(l) == [12, 11, 10, 9, 8, 7])
        .unwrap_or_else(|| panic!("no reversed opponent row in\n{picture}"));
    let bottom = lines
        .iter()
        .position(|l| numbers(l) == [1, 2, 3, 4, 5, 6])
        .unwrap_or_else(|| panic!("no mover row in\n{picture}"));
    assert!(top < bottom, "opponent row must be above:\n{picture}");
    // Pit letters follow the same layout: l..g above, a..f below.
    let letters = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let top_letters = lines
        .iter()
        .position(|l| letters(l).starts_with("l k j i h g"))
        .unwrap_or_else(|| panic!("no reversed opponent letters in\n{picture}"));
    let bottom_letters = lines
        .iter()
        .position(|l| letters(l).starts_with("a b c d e f"))
        .unwrap_or_else(|| panic!("no mover letters in\n{picture}"));
    assert!(top_letters < top && bottom < bottom_letters, "{picture}");
    // Each count sits under its own letter.
    let col = |line: &str, token: &str| {
        let at = line
            .split_inclusive(' ')
            .scan(0, |end, part| {
                *end += part.len();
                Some((*end - part.len(), part.trim()))
            })
            .find(|&(_, p)| p == token)
            .unwrap_or_else(|| panic!("{token:?} not in {line:?}"))
            .0;
        at + token.len()
    };
    assert_eq!(col(lines[top_letters], "g"), col(lines[top], "7"));
    assert_eq!(col(lines[top_letters], "l"), col(lines[top], "12"));
    assert_eq!(col(lines[bottom_letters], "a"), col(lines[bottom], "1"));
    assert_eq!(col(lines[bottom_letters], "f"), col(lines[bottom], "6"));
}

/// Errors name what the user typed wrong: a separator that is not a comma
/// makes a field that is not a count (not a row of too few pits), and one
/// pit is a pit.
#[test]
fn errors_name_the_field_at_fault_in_plain_words() {
    let msg = notation_error(6, "4;4,4,4,4,4/4,4,4,4,4,4");
    assert_mentions(&msg, &["'4;4'", "not a stone count"]);
    let msg = notation_error(6, "4/4,4,4,4,4,4");
    assert!(msg.contains("has 1 pit, expected 6"), "{msg}");
    let msg = notation_error(6, "4,4/4,4,4,4,4,4");
    assert!(msg.contains("has 2 pits, expected 6"), "{msg}");
    let msg = notation_error(1, "1,2/3");
    assert!(msg.contains("has 2 pits, expected 1"), "{msg}");
}

/// An error shows the start of what was typed, on one line: a huge input
/// is cut to its first characters (never inside one), and a line end or
/// another control character is shown escaped.
#[test]
fn errors_echo_the_input_short_and_on_one_line() {
    let msg = notation_error(6, &"\u{e9}".repeat(100_000));
    assert!(
        msg.contains(&format!("'{}…'", "\u{e9}".repeat(60))),
        "{msg}"
    );
    assert!(msg.len() < 300, "{} bytes", msg.len());
    let msg = notation_error(6, "1,0,0,0,0,0/0,0,0,0,0,1\n2,0,0,0,0,0/0,0,0,0,0,1");
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.contains("0,0,0,0,0,1\\n2,0"), "{msg}");
    let msg = notation_error(6, "\u{1b}[31m");
    assert!(msg.contains("\\u{1b}[31m"), "{msg}");
}
