//! Where a timeline label goes: beside the mark it names, on the side that has
//! room, and wrapped onto further lines when neither side has; never cut, and
//! never past the plot, whatever its length.
//!
//! A label's width is estimated from its characters: one cell,
//! [`NARROW_CHAR_PX`], the advance of every common monospace font at the
//! labels' 11 px (0.6 em: DejaVu Sans Mono, Menlo, Liberation Mono, Courier;
//! Consolas is narrower), for printable ASCII and the scripts and symbols
//! those fonts draw in one cell (Latin, Greek, Cyrillic, punctuation, arrows,
//! box drawing); two cells for anything else, which is as wide as CJK and
//! emoji are in a monospace layout. A fallback font can still differ, so each
//! line is drawn with its estimated width as its `textLength` (glyphs and
//! spacing fitted to it): the box the layout reserved is the box the browser
//! draws, in any font.

use std::io::{self, Write};

use crate::html::escape;

/// Width of one printable ASCII character of the labels' font.
const NARROW_CHAR_PX: f64 = 6.6;
/// Width of any other character: two cells.
const WIDE_CHAR_PX: f64 = 2.0 * NARROW_CHAR_PX;
/// What a sum of character widths may exceed its room by: rounding, not a
/// character.
const ROUNDING_PX: f64 = 1e-6;
/// Distance between the baselines of a wrapped label's lines.
pub(super) const LINE_HEIGHT_PX: f64 = 13.0;

/// Where a label may go: from `right_from` rightwards, or rightwards up to
/// `left_until` (the other side of its mark).
#[derive(Clone, Copy)]
pub(super) struct Beside {
    pub(super) right_from_px: f64,
    pub(super) left_until_px: f64,
}

/// The horizontal band every label stays inside: the plot.
#[derive(Clone, Copy)]
pub(super) struct Bounds {
    pub(super) left_px: f64,
    pub(super) right_px: f64,
}

/// A label placed: one or more lines, each with its left edge and width.
pub(super) struct Label {
    lines: Vec<Line>,
}

struct Line {
    text: String,
    x_px: f64,
    width_px: f64,
}

/// Which way a wrapped label runs from its mark.
#[derive(Clone, Copy)]
enum Side {
    Right,
    Left,
}

fn char_width_px(c: char) -> f64 {
    match u32::from(c) {
        // Printable ASCII; Latin-1, Latin Extended and IPA; Greek and
        // Cyrillic; dashes, quotes and ellipsis; arrows; box drawing.
        0x20..=0x7e
        | 0xa0..=0x2af
        | 0x370..=0x52f
        | 0x2010..=0x2027
        | 0x2190..=0x21ff
        | 0x2500..=0x257f => NARROW_CHAR_PX,
        _ => WIDE_CHAR_PX,
    }
}

fn text_width_px(text: &str) -> f64 {
    text.chars().map(char_width_px).sum()
}

impl Label {
    /// Places `text` on one line right of its mark if it fits before the
    /// plot's right edge, else left of its mark if it fits after the plot's
    /// left edge, else wrapped on whichever side has more room.
    pub(super) fn place(text: &str, beside: Beside, bounds: Bounds) -> Label {
        let width_px = text_width_px(text);
        let right_room_px = bounds.right_px - beside.right_from_px;
        let left_room_px = beside.left_until_px - bounds.left_px;
        if width_px <= right_room_px + ROUNDING_PX {
            return Label::one_line(text, beside.right_from_px, width_px);
        }
        if width_px <= left_room_px + ROUNDING_PX {
            return Label::one_line(text, beside.left_until_px - width_px, width_px);
        }
        let (side, room_px) = if right_room_px >= left_room_px {
            (Side::Right, right_room_px)
        } else {
            (Side::Left, left_room_px)
        };
        // The plot is far wider than a character, so one side always has room
        // for one; this only keeps a degenerate layout from looping.
        let room_px = room_px.max(WIDE_CHAR_PX);
        let lines = wrap(text, room_px)
            .into_iter()
            .map(|(text, width_px)| Line {
                x_px: match side {
                    Side::Right => beside.right_from_px,
                    Side::Left => beside.left_until_px - width_px,
                },
                text,
                width_px,
            })
            .collect();
        Label { lines }
    }

    fn one_line(text: &str, x_px: f64, width_px: f64) -> Label {
        Label {
            lines: vec![Line {
                text: text.to_string(),
                x_px,
                width_px,
            }],
        }
    }

    /// The left edge of the label's box.
    pub(super) fn left_px(&self) -> f64 {
        self.lines
            .iter()
            .map(|line| line.x_px)
            .fold(f64::INFINITY, f64::min)
    }

    /// The right edge of the label's box.
    pub(super) fn right_px(&self) -> f64 {
        self.lines
            .iter()
            .map(|line| line.x_px + line.width_px)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    pub(super) fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// Writes the label as one `<text>`, a `<tspan>` per line when wrapped.
    pub(super) fn write(&self, w: &mut dyn Write, baseline_px: f64) -> io::Result<()> {
        match self.lines.as_slice() {
            [line] => write!(
                w,
                "<text {}>{}</text>",
                line_attributes(line, baseline_px),
                escape(&line.text)
            ),
            lines => {
                write!(w, "<text>")?;
                for (number, line) in lines.iter().enumerate() {
                    let y_px = baseline_px + LINE_HEIGHT_PX * number as f64;
                    write!(
                        w,
                        "<tspan {}>{}</tspan>",
                        line_attributes(line, y_px),
                        escape(&line.text)
                    )?;
                }
                write!(w, "</text>")
            }
        }
    }
}

fn line_attributes(line: &Line, y_px: f64) -> String {
    format!(
        "x=\"{:.1}\" y=\"{y_px:.1}\" textLength=\"{:.1}\" lengthAdjust=\"spacingAndGlyphs\"",
        line.x_px, line.width_px
    )
}

/// Breaks `text` into lines no wider than `max_px` (each with its width): at
/// the last space when that leaves the line at least half full, else between
/// any two characters. A space a line breaks at is dropped; nothing else is.
fn wrap(text: &str, max_px: f64) -> Vec<(String, f64)> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut width_px = 0.0;
    // Byte offset of the line's last space and the line's width before it.
    let mut last_space: Option<(usize, f64)> = None;
    for c in text.chars() {
        let c_px = char_width_px(c);
        if width_px + c_px > max_px + ROUNDING_PX && !line.is_empty() {
            match last_space.filter(|&(_, before_px)| before_px >= max_px / 2.0) {
                Some((at, before_px)) => {
                    let rest = line.split_off(at);
                    lines.push((
                        std::mem::replace(&mut line, rest[1..].to_string()),
                        before_px,
                    ));
                    width_px = text_width_px(&line);
                }
                None => {
                    lines.push((std::mem::take(&mut line), width_px));
                    width_px = 0.0;
                }
            }
            last_space = None;
            if c == ' ' && line.is_empty() {
                continue;
            }
        }
        if c == ' ' {
            last_space = Some((line.len(), width_px));
        }
        line.push(c);
        width_px += c_px;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push((line, width_px));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLOT: Bounds = Bounds {
        left_px: 100.0,
        right_px: 500.0,
    };

    fn beside(at_px: f64) -> Beside {
        Beside {
            right_from_px: at_px + 8.0,
            left_until_px: at_px - 8.0,
        }
    }

    fn inside(label: &Label) -> bool {
        label.left_px() >= PLOT.left_px && label.right_px() <= PLOT.right_px
    }

    fn shown(label: &Label) -> String {
        label.lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn a_label_that_fits_goes_right_of_its_mark() {
        let label = Label::place("status", beside(200.0), PLOT);
        assert_eq!(label.line_count(), 1);
        assert_eq!(label.left_px(), 208.0);
    }

    #[test]
    fn a_label_at_the_right_edge_goes_left_of_its_mark() {
        let label = Label::place("succeeded", beside(495.0), PLOT);
        assert_eq!(label.line_count(), 1);
        assert!((label.right_px() - 487.0).abs() < 1e-9);
        assert!(inside(&label));
    }

    #[test]
    fn labels_of_any_length_stay_whole_inside_the_plot() {
        for at_px in [100.0, 104.0, 250.0, 300.0, 496.0, 500.0] {
            for length in [0, 1, 5, 30, 59, 60, 61, 120, 1000] {
                for pattern in ["status succeeded ", "票据🙂x", "aaaa"] {
                    let text: String = pattern.chars().cycle().take(length).collect();
                    let label = Label::place(&text, beside(at_px), PLOT);
                    assert!(inside(&label), "{text:?} at {at_px}");
                    assert_eq!(
                        shown(&label).replace(' ', ""),
                        text.replace(' ', ""),
                        "{text:?} at {at_px} lost characters"
                    );
                    for line in &label.lines {
                        assert!((line.width_px - text_width_px(&line.text)).abs() < 1e-9);
                    }
                }
            }
        }
    }

    #[test]
    fn wrapping_breaks_at_a_space_when_the_line_stays_half_full() {
        let lines = wrap("aaaa bbbb cc", 9.0 * NARROW_CHAR_PX);
        let texts: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["aaaa bbbb", "cc"]);
        let lines = wrap("aaaaa bbbbbb", 9.0 * NARROW_CHAR_PX);
        let texts: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["aaaaa", "bbbbbb"]);
        let lines = wrap("a bbbbbbbbbbbb", 9.0 * NARROW_CHAR_PX);
        let texts: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a bbbbbbb", "bbbbb"]);
    }
}
