//! One scenario's SVG timeline. The x axis is real time since the scenario
//! started; each lane is one kind of event:
//!
//! | lane | item | where |
//! |---|---|---|
//! | steps | a bar per step | `start_ms..end_ms` |
//! | clock | a marker per clock move (`sim_start_ms != sim_end_ms`) | step start |
//! | adapter calls | a bar per call, labelled `execute op-1 → unknown` | `start_ms..end_ms` |
//! | provider requests | a bar per journal entry; faults amber, lost responses dashed | `start_ms..end_ms` (open to the right if it never ended) |
//! | commits | a diamond per effect a request committed | end of that request: the report has no finer commit time |
//! | webhooks | a dot per delivery, hollow when forged | start of the delivering call |
//! | outcomes | a dot per reported outcome, coloured by outcome | end of the call that reported it |
//!
//! Items a violation points at carry the class `evidence` (drawn red) and
//! `data-violations="1 2"` (which of the scenario's violations).
//!
//! Every label is drawn whole inside the plot (`rect.plot-area`): right of its
//! mark, left of it when the right edge is too close, wrapped when neither
//! side has room (`label.rs`). An item's row in its lane leaves room for its
//! label, and a row is as tall as its most wrapped label.

mod label;

use std::io::{self, Write};

use serde_json::Value;

use super::{escape, EvidenceMarks};
use crate::model::{CallEnd, CallRecord, CallReply, Check, Evidence, OutcomeKind, ScenarioReport};
use crate::text;
use label::{Beside, Bounds, Label, LINE_HEIGHT_PX};

/// Width of the lane labels on the left.
const LABEL_WIDTH_PX: f64 = 130.0;
/// Width of the time axis.
const PLOT_WIDTH_PX: f64 = 820.0;
/// Margin right of the plot, so that a marker at its end is drawn whole.
const RIGHT_MARGIN_PX: f64 = 10.0;
/// Height of the axis band on top.
const AXIS_HEIGHT_PX: f64 = 22.0;
/// Height of one row in a lane; overlapping bars get one row each.
const ROW_HEIGHT_PX: f64 = 22.0;
/// Height of a bar inside its row.
const BAR_HEIGHT_PX: f64 = 14.0;
/// Narrowest bar drawn, so that an instant call is still visible.
const MIN_BAR_WIDTH_PX: f64 = 3.0;
/// Half the width of a marker (diamond, dot, triangle).
const MARKER_HALF_PX: f64 = 6.0;
/// Distance from a bar's start to its label's start.
const BAR_LABEL_GAP_PX: f64 = 3.0;
/// Distance from a marker's centre to its label.
const MARKER_LABEL_GAP_PX: f64 = 8.0;
/// Space kept between neighbours in one row.
const ROW_GAP_PX: f64 = 4.0;
/// Inset of the labels from the plot's edges.
const PLOT_INSET_PX: f64 = 2.0;
/// How many intervals the time axis is divided into.
const AXIS_TICKS: u64 = 5;

/// The key of an item on the timeline, shared by the drawing and by evidence,
/// so an evidence pointer finds the element it should highlight.
pub(super) fn item_key(scenario: &ScenarioReport, evidence: &Evidence) -> String {
    match evidence {
        Evidence::Request { seq } => format!("req-{seq}"),
        Evidence::Call { index } => format!("call-{index}"),
        // Effect ids come from the provider: use the ledger position instead,
        // so that element ids stay simple and unique.
        Evidence::Effect { id } => match scenario.ledger.iter().position(|e| &e.id == id) {
            Some(position) => format!("effect-{position}"),
            None => "effect-missing".to_string(),
        },
        Evidence::Delivery { call_index } => format!("delivery-{call_index}"),
    }
}

/// The element id of an item key in one scenario's section.
pub(super) fn item_id(anchor: &str, key: &str) -> String {
    format!("{anchor}-{key}")
}

/// `invariant-1` or `expectation-final`: a token for `data-check`.
pub(super) fn check_token(check: &Check) -> String {
    match check {
        Check::Invariant(invariant) => format!("invariant-{}", invariant.number()),
        Check::Expectation { key } => format!("expectation-{key}"),
        Check::Rule { rule } => format!("rule-{}", rule.name()),
    }
}

/// What an outcome marker's key adds to its call's key. Evidence names the call;
/// both the call's bar and its outcome marker light up.
const OUTCOME_KEY_SUFFIX: &str = "-outcome";

/// One drawable thing: a bar from `start_ms` to `end_ms`, or a marker when
/// they are equal and `marker` is set.
struct Item {
    key: String,
    classes: String,
    start_ms: u64,
    end_ms: u64,
    label: String,
    tooltip: String,
    marker: Option<Marker>,
}

#[derive(Clone, Copy)]
enum Marker {
    Diamond,
    Dot,
    Triangle,
}

struct Lane {
    name: &'static str,
    class: &'static str,
    items: Vec<Item>,
}

/// Maps real milliseconds onto the plot.
struct Scale {
    span_ms: u64,
}

impl Item {
    /// The key evidence uses for this item.
    fn evidence_key(&self) -> &str {
        self.key
            .strip_suffix(OUTCOME_KEY_SUFFIX)
            .unwrap_or(&self.key)
    }
}

impl Scale {
    fn x(&self, ms: u64) -> f64 {
        LABEL_WIDTH_PX + PLOT_WIDTH_PX * (ms.min(self.span_ms) as f64) / (self.span_ms as f64)
    }
}

/// A lane laid out: each item's label and row, and each row's top (from the
/// lane's top).
struct LaneLayout {
    labels: Vec<Label>,
    rows: Vec<usize>,
    row_tops_px: Vec<f64>,
    height_px: f64,
}

/// The band labels stay in: the plot and its right margin, slightly inset.
fn label_bounds() -> Bounds {
    Bounds {
        left_px: LABEL_WIDTH_PX + PLOT_INSET_PX,
        right_px: LABEL_WIDTH_PX + PLOT_WIDTH_PX + RIGHT_MARGIN_PX - PLOT_INSET_PX,
    }
}

/// Where an item's label may go: from inside a bar's start, or past a
/// marker; or, on the other side, ending before either.
fn beside(item: &Item, scale: &Scale) -> Beside {
    let x = scale.x(item.start_ms);
    let gap_px = match item.marker {
        None => BAR_LABEL_GAP_PX,
        Some(_) => MARKER_LABEL_GAP_PX,
    };
    Beside {
        right_from_px: x + gap_px,
        left_until_px: x - gap_px,
    }
}

fn lay_out_lane(lane: &Lane, scale: &Scale) -> LaneLayout {
    let labels: Vec<Label> = lane
        .items
        .iter()
        .map(|item| Label::place(&item.label, beside(item, scale), label_bounds()))
        .collect();
    let rows = pack_rows(&lane.items, &labels, scale);
    let mut row_lines = vec![1; rows.iter().copied().max().map_or(1, |m| m + 1)];
    for (label, &row) in labels.iter().zip(&rows) {
        row_lines[row] = row_lines[row].max(label.line_count());
    }
    let mut row_tops_px = Vec::with_capacity(row_lines.len());
    let mut height_px = 0.0;
    for lines in row_lines {
        row_tops_px.push(height_px);
        height_px += ROW_HEIGHT_PX + LINE_HEIGHT_PX * (lines - 1) as f64;
    }
    LaneLayout {
        labels,
        rows,
        row_tops_px,
        height_px,
    }
}

/// Writes `<svg class="timeline" data-scenario="…">` for one scenario.
pub(super) fn write_timeline(
    w: &mut dyn Write,
    anchor: &str,
    scenario: &ScenarioReport,
    marks: &EvidenceMarks,
) -> io::Result<()> {
    let scale = Scale {
        span_ms: span_ms(scenario).max(1),
    };
    let lanes = lanes(scenario, scale.span_ms);
    let layouts: Vec<LaneLayout> = lanes
        .iter()
        .map(|lane| lay_out_lane(lane, &scale))
        .collect();
    let height = AXIS_HEIGHT_PX + layouts.iter().map(|l| l.height_px).sum::<f64>() + 6.0;
    let width = LABEL_WIDTH_PX + PLOT_WIDTH_PX + RIGHT_MARGIN_PX;
    writeln!(
        w,
        "<svg class=\"timeline\" id=\"{anchor}-timeline\" data-scenario=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"timeline of {}\">",
        escape(&scenario.id),
        escape(&scenario.id)
    )?;
    writeln!(
        w,
        "<rect class=\"plot-area\" x=\"{LABEL_WIDTH_PX}\" y=\"0\" width=\"{}\" height=\"{height}\" fill=\"none\"/>",
        PLOT_WIDTH_PX + RIGHT_MARGIN_PX
    )?;
    write_axis(w, &scale, height)?;
    let mut top = AXIS_HEIGHT_PX;
    for (lane, layout) in lanes.iter().zip(&layouts) {
        write_lane(w, anchor, lane, layout, top, &scale, marks)?;
        top += layout.height_px;
    }
    writeln!(w, "</svg>")
}

/// The real time the picture spans: the latest thing that happened.
fn span_ms(scenario: &ScenarioReport) -> u64 {
    let steps = scenario.steps.iter().map(|s| u64::from(s.end_ms));
    let calls = scenario.calls.iter().map(|c| u64::from(c.end_ms));
    let journal = scenario
        .journal
        .iter()
        .map(|r| r.end_ms.unwrap_or(r.start_ms));
    steps
        .chain(calls)
        .chain(journal)
        .chain(std::iter::once(scenario.duration_ms))
        .max()
        .unwrap_or(0)
}

fn write_axis(w: &mut dyn Write, scale: &Scale, height: f64) -> io::Result<()> {
    writeln!(w, "<g class=\"axis\">")?;
    for tick in 0..=AXIS_TICKS {
        let ms = scale.span_ms * tick / AXIS_TICKS;
        let x = scale.x(ms);
        let anchor = if tick == AXIS_TICKS { "end" } else { "start" };
        writeln!(
            w,
            "<line class=\"tick\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{height:.1}\"/><text x=\"{x:.1}\" y=\"12\" text-anchor=\"{anchor}\">{}</text>",
            AXIS_HEIGHT_PX - 6.0,
            text::duration(ms)
        )?;
    }
    writeln!(w, "</g>")
}

fn write_lane(
    w: &mut dyn Write,
    anchor: &str,
    lane: &Lane,
    layout: &LaneLayout,
    top: f64,
    scale: &Scale,
    marks: &EvidenceMarks,
) -> io::Result<()> {
    writeln!(
        w,
        "<g class=\"lane {}\" data-lane=\"{}\">",
        lane.class, lane.class
    )?;
    writeln!(
        w,
        "<line class=\"lane-line\" x1=\"0\" y1=\"{top:.1}\" x2=\"{:.1}\" y2=\"{top:.1}\"/><text class=\"lane-label\" x=\"4\" y=\"{:.1}\">{}</text>",
        LABEL_WIDTH_PX + PLOT_WIDTH_PX,
        top + 15.0,
        lane.name
    )?;
    for ((item, label), &row) in lane.items.iter().zip(&layout.labels).zip(&layout.rows) {
        let y = top + layout.row_tops_px[row] + (ROW_HEIGHT_PX - BAR_HEIGHT_PX) / 2.0;
        write_item(w, anchor, item, label, y, scale, marks)?;
    }
    writeln!(w, "</g>")
}

fn write_item(
    w: &mut dyn Write,
    anchor: &str,
    item: &Item,
    label: &Label,
    y: f64,
    scale: &Scale,
    marks: &EvidenceMarks,
) -> io::Result<()> {
    let violations = marks.get(item.evidence_key());
    let (evidence_class, evidence_attr) = match violations {
        Some(numbers) => (
            " evidence",
            format!(
                " data-violations=\"{}\"",
                numbers
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ),
        None => ("", String::new()),
    };
    writeln!(
        w,
        "<g class=\"item {}{evidence_class}\" id=\"{}\"{evidence_attr}><title>{}</title>",
        item.classes,
        escape(&item_id(anchor, &item.key)),
        escape(&item.tooltip)
    )?;
    let x = scale.x(item.start_ms);
    let mid_y = y + BAR_HEIGHT_PX / 2.0;
    match item.marker {
        None => {
            let (start_px, end_px) = mark_span(item, scale);
            writeln!(
                w,
                "<rect x=\"{start_px:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{BAR_HEIGHT_PX:.1}\" rx=\"2\"/>",
                end_px - start_px
            )?;
        }
        Some(marker) => write_marker(w, marker, x, mid_y)?,
    }
    label.write(w, mid_y + 4.0)?;
    writeln!(w, "</g>")
}

/// The horizontal extent of an item's mark: its bar, or its marker.
fn mark_span(item: &Item, scale: &Scale) -> (f64, f64) {
    let x = scale.x(item.start_ms);
    match item.marker {
        None => (x, scale.x(item.end_ms).max(x + MIN_BAR_WIDTH_PX)),
        Some(_) => (x - MARKER_HALF_PX, x + MARKER_HALF_PX),
    }
}

fn write_marker(w: &mut dyn Write, marker: Marker, x: f64, y: f64) -> io::Result<()> {
    match marker {
        Marker::Diamond => writeln!(
            w,
            "<path d=\"M{x:.1} {:.1} L{:.1} {y:.1} L{x:.1} {:.1} L{:.1} {y:.1} Z\"/>",
            y - 6.0,
            x + 6.0,
            y + 6.0,
            x - 6.0
        ),
        Marker::Dot => writeln!(w, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\"/>"),
        Marker::Triangle => writeln!(
            w,
            "<path d=\"M{x:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z\"/>",
            y - 6.0,
            x + 6.0,
            y + 5.0,
            x - 6.0,
            y + 5.0
        ),
    }
}

/// Gives each item the first row where neither its mark nor its label touches
/// the previous item's; items are drawn in record order.
fn pack_rows(items: &[Item], labels: &[Label], scale: &Scale) -> Vec<usize> {
    let mut row_ends_px: Vec<f64> = Vec::new();
    let mut rows = Vec::with_capacity(items.len());
    for (item, label) in items.iter().zip(labels) {
        let (mark_start_px, mark_end_px) = mark_span(item, scale);
        let start_px = mark_start_px.min(label.left_px());
        let end_px = mark_end_px.max(label.right_px() + ROW_GAP_PX);
        // Bars that touch (one step ends as the next begins) share a row.
        let row = match row_ends_px.iter().position(|&end| end <= start_px + 0.5) {
            Some(row) => row,
            None => {
                row_ends_px.push(0.0);
                row_ends_px.len() - 1
            }
        };
        row_ends_px[row] = end_px;
        rows.push(row);
    }
    rows
}

fn lanes(scenario: &ScenarioReport, span_ms: u64) -> Vec<Lane> {
    vec![
        Lane {
            name: "steps",
            class: "steps",
            items: step_items(scenario),
        },
        Lane {
            name: "clock",
            class: "clock",
            items: clock_items(scenario),
        },
        Lane {
            name: "adapter calls",
            class: "calls",
            items: scenario.calls.iter().map(call_item).collect(),
        },
        Lane {
            name: "provider requests",
            class: "requests",
            items: request_items(scenario, span_ms),
        },
        Lane {
            name: "commits",
            class: "commits",
            items: commit_items(scenario),
        },
        Lane {
            name: "webhooks",
            class: "webhooks",
            items: webhook_items(scenario),
        },
        Lane {
            name: "outcomes",
            class: "outcomes",
            items: outcome_items(scenario),
        },
    ]
}

fn step_items(scenario: &ScenarioReport) -> Vec<Item> {
    scenario
        .steps
        .iter()
        .map(|step| {
            let label = format!("{} {}", step.number, text::one_line(&step.label.text()));
            Item {
                key: format!("step-{}", step.number),
                classes: "step".to_string(),
                start_ms: u64::from(step.start_ms),
                end_ms: u64::from(step.end_ms),
                tooltip: format!(
                    "step {label} ({})",
                    text::duration(u64::from(step.end_ms.saturating_sub(step.start_ms)))
                ),
                label,
                marker: None,
            }
        })
        .collect()
}

fn clock_items(scenario: &ScenarioReport) -> Vec<Item> {
    scenario
        .steps
        .iter()
        .filter(|step| step.sim_start_ms != step.sim_end_ms)
        .map(|step| {
            let moved = text::sim_span(step.sim_end_ms.saturating_sub(step.sim_start_ms));
            let since_start = text::sim_span(step.sim_end_ms.saturating_sub(scenario.sim_start_ms));
            Item {
                key: format!("clock-{}", step.number),
                classes: "clock-move".to_string(),
                start_ms: u64::from(step.start_ms),
                end_ms: u64::from(step.start_ms),
                label: format!("+{moved}"),
                tooltip: format!(
                    "step {}: simulator clock moved {moved}, now start+{since_start}",
                    step.number
                ),
                marker: Some(Marker::Triangle),
            }
        })
        .collect()
}

/// `execute op-1 → unknown`: the call and its reply's outcome in a few words.
fn call_label(call: &CallRecord) -> String {
    let mut label = call.call.to_string();
    if let Some(op) = &call.operation_id {
        label.push(' ');
        label.push_str(&text::one_line(op));
    }
    let ending = match &call.end {
        CallEnd::Replied => call
            .reply
            .as_ref()
            .map(CallReply::to_value)
            .and_then(|r| {
                r.get("outcome")
                    .and_then(Value::as_str)
                    .map(text::one_line)
                    .or_else(|| {
                        r.get("accepted")
                            .and_then(Value::as_bool)
                            .map(|a| if a { "accepted" } else { "rejected" }.to_string())
                    })
            })
            .unwrap_or_else(|| "replied".to_string()),
        CallEnd::Crashed => "crashed".to_string(),
        CallEnd::Exited { .. } => "exited".to_string(),
        CallEnd::BadReply { .. } => "bad reply".to_string(),
        CallEnd::Deadline { .. } => "deadline".to_string(),
        CallEnd::Failed { .. } => "failed".to_string(),
    };
    format!("{label} → {ending}")
}

fn call_end_class(end: &CallEnd) -> &'static str {
    match end {
        CallEnd::Replied => "replied",
        CallEnd::Crashed => "crashed",
        CallEnd::Exited { .. } => "exited",
        CallEnd::BadReply { .. } => "bad-reply",
        CallEnd::Deadline { .. } => "deadline",
        CallEnd::Failed { .. } => "failed",
    }
}

fn call_item(call: &CallRecord) -> Item {
    Item {
        key: format!("call-{}", call.index),
        classes: format!("call {}", call_end_class(&call.end)),
        start_ms: u64::from(call.start_ms),
        end_ms: u64::from(call.end_ms),
        label: call_label(call),
        tooltip: text::call_line(call),
        marker: None,
    }
}

fn request_items(scenario: &ScenarioReport, span_ms: u64) -> Vec<Item> {
    scenario
        .journal
        .iter()
        .map(|request| {
            let mut classes = String::from("request");
            if request.fault.is_some() {
                classes.push_str(" fault");
            }
            if request.lost {
                classes.push_str(" lost");
            }
            if request.replayed {
                classes.push_str(" replayed");
            }
            if request.end_ms.is_none() {
                classes.push_str(" open");
            }
            let mut label = format!(
                "#{} {} {}",
                request.seq,
                text::one_line(&request.method),
                text::one_line(&request.target)
            );
            if let Some(fault) = &request.fault {
                label.push_str(&format!(" ⚡ {}", text::fault_text(fault)));
            } else if request.lost {
                label.push_str(&format!(" ({})", text::fate_text(&request.fate)));
            }
            Item {
                key: format!("req-{}", request.seq),
                classes,
                start_ms: request.start_ms,
                end_ms: request.end_ms.unwrap_or(span_ms),
                label,
                tooltip: text::journal_line(request),
                marker: None,
            }
        })
        .collect()
}

fn commit_items(scenario: &ScenarioReport) -> Vec<Item> {
    scenario
        .ledger
        .iter()
        .enumerate()
        .filter_map(|(position, effect)| {
            // Seed objects existed before the run: nothing committed them in it.
            let request = scenario.request(effect.request_seq?)?;
            let at_ms = request.end_ms.unwrap_or(request.start_ms);
            Some(Item {
                key: format!("effect-{position}"),
                classes: "commit".to_string(),
                start_ms: at_ms,
                end_ms: at_ms,
                label: text::one_line(&effect.id),
                tooltip: text::effect_line(effect),
                marker: Some(Marker::Diamond),
            })
        })
        .collect()
}

fn webhook_items(scenario: &ScenarioReport) -> Vec<Item> {
    scenario
        .deliveries
        .iter()
        .map(|delivery| {
            let at_ms = scenario
                .call(delivery.call_index)
                .map_or(0, |call| u64::from(call.start_ms));
            let mut label = text::one_line(&delivery.event_type);
            if delivery.attempt > 1 {
                label.push_str(&format!(" ×{}", delivery.attempt));
            }
            if delivery.forged {
                label.push_str(" (forged)");
            }
            Item {
                key: format!("delivery-{}", delivery.call_index),
                classes: if delivery.forged {
                    "webhook forged"
                } else {
                    "webhook"
                }
                .to_string(),
                start_ms: at_ms,
                end_ms: at_ms,
                label,
                tooltip: text::delivery_line(delivery),
                marker: Some(Marker::Dot),
            }
        })
        .collect()
}

/// A marker per outcome reply. Its key is the call's own key plus `-outcome`:
/// evidence pointing at a call highlights the call's bar.
fn outcome_items(scenario: &ScenarioReport) -> Vec<Item> {
    scenario
        .calls
        .iter()
        .filter_map(|call| {
            let outcome = call.reply.as_ref()?.get("outcome")?;
            let outcome = outcome.as_str()?;
            // The class comes from our own names, never from the reply's text.
            let kind = serde_json::from_value::<OutcomeKind>(Value::String(outcome.to_string()));
            let class = kind.map_or("other", OutcomeKind::as_str);
            Some(Item {
                key: format!("call-{}{OUTCOME_KEY_SUFFIX}", call.index),
                classes: format!("outcome outcome-{class}"),
                start_ms: u64::from(call.end_ms),
                end_ms: u64::from(call.end_ms),
                label: text::one_line(outcome),
                tooltip: text::call_line(call),
                marker: Some(Marker::Dot),
            })
        })
        .collect()
}
