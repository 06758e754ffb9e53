//! The invariants as the code knows them agree with docs/scenario-format.md:
//! the numbers and names of its table "How the harness checks them", and the
//! meanings of its list "Invariants checked in every scenario" (the first
//! sentence of each entry). Change one and this test asks for the other.

use lostreply_reports::model::Invariant;

const SCENARIO_FORMAT: &str = include_str!("../../../docs/scenario-format.md");

/// The lines of the `## heading` section, up to the next `## ` heading.
fn section(heading: &str) -> Vec<&'static str> {
    let mut lines = SCENARIO_FORMAT.lines();
    assert!(
        lines.any(|l| l.trim() == format!("## {heading}")),
        "docs/scenario-format.md has no section {heading:?}"
    );
    lines.take_while(|l| !l.starts_with("## ")).collect()
}

/// `(number, name)` of each row of the table under "How the harness checks them".
fn table_rows() -> Vec<(u8, String)> {
    section("How the harness checks them")
        .into_iter()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().strip_prefix('|')?.split('|').collect();
            let number = cells.first()?.trim().parse().ok()?;
            let name = cells.get(1)?.trim().trim_matches('`').to_owned();
            Some((number, name))
        })
        .collect()
}

/// `(number, first sentence)` of each entry of the list under "Invariants checked in every scenario".
fn list_entries() -> Vec<(u8, String)> {
    let mut entries: Vec<(u8, String)> = Vec::new();
    for line in section("Invariants checked in every scenario") {
        let numbered = line
            .split_once(". ")
            .and_then(|(n, rest)| Some((n.parse::<u8>().ok()?, rest)));
        match numbered {
            Some((number, text)) if !line.starts_with(' ') => {
                entries.push((number, text.trim().to_owned()))
            }
            Some(_) | None => {
                // An entry's continuation lines are indented; anything else ends it.
                if let (Some((_, text)), true) = (entries.last_mut(), line.starts_with("   ")) {
                    text.push(' ');
                    text.push_str(line.trim());
                }
            }
        }
    }
    entries
        .into_iter()
        .map(|(number, text)| {
            let first = match text.find(". ") {
                Some(end) => text[..=end].to_owned(),
                None => text,
            };
            (number, first)
        })
        .collect()
}

#[test]
fn numbers_and_names_agree_with_the_documented_table() {
    let code: Vec<(u8, String)> = Invariant::ALL
        .into_iter()
        .map(|i| (i.number(), i.name().to_owned()))
        .collect();
    assert_eq!(table_rows(), code);
}

#[test]
fn meanings_agree_with_the_documented_list() {
    let code: Vec<(u8, String)> = Invariant::ALL
        .into_iter()
        .map(|i| (i.number(), i.meaning().to_owned()))
        .collect();
    assert_eq!(list_entries(), code);
}
