//! The writer's output against `serde_json::to_string_pretty`.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use serde_json::value::RawValue;

use super::out::{Out, LEVELS};
use super::reindent::{needs_escape, reindent, string_end};
use super::*;
use crate::shared_json::SharedJson;

/// This module's writer, into a string.
fn fast<T: ?Sized + Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    write_pretty(&mut out, value).unwrap();
    String::from_utf8(out).unwrap()
}

/// serde_json's own pretty writer, with `write_pretty`'s final newline.
fn reference<T: ?Sized + Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

/// The value written both ways, as a tree and as shared text, compared
/// with serde_json's pretty writing of the tree.
fn assert_same(value: &Value) {
    let expected = reference(value);
    assert_eq!(fast(value), expected, "tree {value}");
    let shared = SharedJson::new(value);
    assert_eq!(fast(&shared), expected, "shared {value}");
    // Other serializers still get the tree's calls.
    assert_eq!(reference(&shared), expected, "shared, serde_json {value}");
    assert_eq!(serde_json::to_value(&shared).unwrap(), *value);
    // Nested at some depth, in an array and as an optional member.
    let holder = Holder {
        name: "h",
        items: vec![Inner {
            shared: shared.clone(),
            maybe: Some(shared.clone()),
            none: None,
        }],
        last: shared,
    };
    let tree = json!({"name": "h", "items": [{"shared": value, "maybe": value, "none": null}], "last": value});
    assert_eq!(fast(&holder), reference(&tree), "nested {value}");
    assert_eq!(
        reference(&holder),
        reference(&tree),
        "nested, serde_json {value}"
    );
}

#[derive(Serialize)]
struct Holder {
    name: &'static str,
    items: Vec<Inner>,
    last: SharedJson,
}

#[derive(Serialize)]
struct Inner {
    shared: SharedJson,
    maybe: Option<SharedJson>,
    none: Option<SharedJson>,
}

#[test]
fn tricky_values_are_written_as_serde_json_writes_them() {
    for value in [
        json!({}),
        json!([]),
        json!({"a": {}, "b": [], "c": [{}], "d": [[]], "e": {"f": {"g": {}}}}),
        json!([[], {}, [[]], [{}], [1, []], {"x": []}]),
        json!({"q\"k": "a \"quoted\" \\ back\\slash", "esc": "\n\t\r\u{8}\u{c}\u{1}\u{1f}\u{7f}"}),
        json!({"u": "\u{2028}\u{2029}\u{0}é漢字🦀", "\\u0041": "\\u0041 not an escape"}),
        json!({"s": ":,{}[]\"", "k:,{}[]": ", : { } [ ]", "": ""}),
        json!({"n": [0, -1, 1.5, -2.25e-10, 1e300, -1.7976931348623157e308, 5e-324, 0.30000000000000004]}),
        json!({"big": u64::MAX, "small": i64::MIN, "zero": -0.0, "t": true, "f": false, "null": null}),
        json!("top-level string with \"quotes\" and , : [ {"),
        json!(42),
        json!(-3.5),
        json!(true),
        json!(null),
        json!(""),
    ] {
        assert_same(&value);
    }
}

#[test]
fn deep_nesting_past_the_one_slice_indent() {
    for depth in [LEVELS - 1, LEVELS, LEVELS + 1, 2 * LEVELS + 3, 100] {
        let mut value = json!({"leaf": [1, {"x": "y"}], "empty": {}});
        for level in 0..depth {
            value = if level % 2 == 0 {
                json!([value, level])
            } else {
                json!({"level": level, "inner": value})
            };
        }
        assert_same(&value);
    }
}

#[test]
fn only_this_writer_takes_the_raw_path() {
    /// Records whether its serializer is the report's.
    struct Probe(Cell<Option<bool>>);
    impl Serialize for Probe {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.0.set(Some(is_report_serializer::<S>()));
            serializer.serialize_unit()
        }
    }
    let probe = Probe(Cell::new(None));
    fast(&probe);
    assert_eq!(probe.0.get(), Some(true));
    serde_json::to_string_pretty(&probe).unwrap();
    assert_eq!(probe.0.get(), Some(false));
    serde_json::to_value(&probe).unwrap();
    assert_eq!(probe.0.get(), Some(false));
    // A map key goes through another serializer, and keeps working.
    let keyed: std::collections::HashMap<SharedJson, u8> =
        [(SharedJson::new(&json!("k")), 1)].into();
    assert_eq!(fast(&keyed), "{\n  \"k\": 1\n}\n");
}

#[test]
fn shared_text_that_misses_this_serializer_is_an_error() {
    let mut out = Vec::new();
    let mut other = serde_json::Serializer::pretty(&mut out);
    assert!(write_shared(r#"{"a":1}"#, None, &mut other).is_err());
    // And nothing is left pending for the next value.
    assert!(!PENDING.get());
}

#[test]
fn other_raw_fragments_are_pasted_as_they_are() {
    #[derive(Serialize)]
    struct WithRaw {
        raw: Box<RawValue>,
    }
    let value = WithRaw {
        raw: RawValue::from_string("{ \"a\" : [1, 2] }".to_owned()).unwrap(),
    };
    assert_eq!(fast(&value), reference(&value));
}

#[test]
fn whitespace_in_the_text_is_laid_out_anew() {
    let text = " {\n \"a\" : [ 1 ,\t{ } , [ ] , \"x , y\" ] ,\r\n \"b\":{ \"c\" :null } } ";
    let mut out = Out::with_capacity(0);
    reindent(&mut out, text.as_bytes(), 0);
    let value: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        String::from_utf8(out.as_bytes().to_vec()).unwrap(),
        serde_json::to_string_pretty(&value).unwrap()
    );
}

#[test]
fn text_that_is_not_json_does_not_panic() {
    for text in [
        "",
        "}",
        "]]]",
        "{",
        "[[",
        "\"",
        "\"\\",
        "\\",
        "{\"a\":",
        ",,,",
        ":",
        "{ ",
        "[ ",
        "\"unterminated \\\" {",
        "}{][",
        "é}",
    ] {
        let mut out = Out::with_capacity(0);
        reindent(&mut out, text.as_bytes(), 0);
        reindent(&mut out, text.as_bytes(), 3);
    }
}

/// A small deterministic generator (xorshift64*), no dependency.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn string(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a", "key", " ", "\"", "\\", ":", ",", "{", "}", "[", "]", "\n", "\t", "\u{1}",
            "\u{1f}", "\u{7f}", "é", "漢", "🦀", "\u{2028}", "\\u0041", "/", "0", "-1e5", "true",
            "null",
        ];
        let len = self.below(6);
        (0..len)
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }

    fn number(&mut self) -> Value {
        match self.below(6) {
            0 => json!(self.next()),
            1 => json!(self.next() as i64),
            2 => json!(self.below(1000) as i64 - 500),
            3 => json!(f64::from_bits(self.next()))
                .as_f64()
                .map_or(json!(0.5), |f| json!(f)),
            4 => json!((self.below(2_000_001) as f64 - 1e6) / 1e3),
            _ => json!(10f64.powi(self.below(600) as i32 - 300)),
        }
    }

    fn value(&mut self, depth: u32) -> Value {
        let pick = if depth == 0 {
            self.below(5)
        } else {
            self.below(8)
        };
        match pick {
            0 => Value::Null,
            1 => json!(self.below(2) == 0),
            2 => self.number(),
            3 | 4 => json!(self.string()),
            5 | 6 => {
                let len = self.below(5);
                Value::Object(
                    (0..len)
                        .map(|_| (self.string(), self.value(depth - 1)))
                        .collect(),
                )
            }
            _ => {
                let len = self.below(5);
                Value::Array((0..len).map(|_| self.value(depth - 1)).collect())
            }
        }
    }
}

#[test]
fn generated_values_are_written_as_serde_json_writes_them() {
    let mut gen = Gen(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let depth = gen.below(7) as u32;
        let value = gen.value(depth);
        assert_same(&value);
    }
}

// Every shape of the serde data model, for the test below.

#[derive(Serialize)]
struct Unit;
#[derive(Serialize)]
struct Newtype(u8);
#[derive(Serialize)]
struct Tuple(i8, &'static str);
#[derive(Serialize)]
struct Empty {}
#[derive(Serialize)]
enum External {
    A,
    B(u32),
    C(u8, u8),
    D { x: i16, y: Vec<u8> },
    E(),
    F {},
}
#[derive(Serialize)]
#[serde(tag = "kind")]
enum Internal {
    A,
    B { x: u8 },
    C(Inner2),
}
#[derive(Serialize)]
struct Inner2 {
    y: Option<u8>,
}
#[derive(Serialize)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    A(Vec<u8>),
    B,
}
#[derive(Serialize)]
#[serde(untagged)]
enum Untagged {
    A(f64),
    B { z: bool },
}
#[derive(Serialize)]
struct Flat {
    a: u8,
    #[serde(flatten)]
    rest: BTreeMap<String, Value>,
    #[serde(flatten)]
    inner: Inner2,
}
#[derive(Serialize)]
struct All {
    unit: (),
    unit_struct: Unit,
    newtype: Newtype,
    tuple: Tuple,
    empty_tuple: (),
    empty: Empty,
    externals: Vec<External>,
    internals: Vec<Internal>,
    adjacent: Vec<Adjacent>,
    untagged: Vec<Untagged>,
    flat: Flat,
    bytes: serde_bytes_like::Bytes,
    no_bytes: serde_bytes_like::NoBytes,
    chars: Vec<char>,
    floats: Vec<f32>,
    doubles: Vec<f64>,
    ints: (i8, i16, i32, i64, i128, u8, u16, u32, u64, u128),
    int_keys: BTreeMap<i64, u8>,
    u128_keys: BTreeMap<u128, u8>,
    bool_keys: BTreeMap<bool, u8>,
    char_keys: BTreeMap<char, u8>,
    float_keys: Vec<(f64, u8)>,
    unit_variant_keys: BTreeMap<Key, u8>,
    newtype_keys: BTreeMap<KeyNewtype, u8>,
    option_keys: BTreeMap<Option<&'static str>, u8>,
    nested_empty: Vec<Vec<BTreeMap<String, u8>>>,
    display: Displayed,
}
#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    First,
    Second,
}
#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
struct KeyNewtype(&'static str);
/// Written through `collect_str`.
struct Displayed;
impl Serialize for Displayed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("a \"displayed\" {}", 1))
    }
}
/// `serialize_bytes` without a dependency.
mod serde_bytes_like {
    use serde::{Serialize, Serializer};
    pub struct Bytes;
    impl Serialize for Bytes {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(&[0, 7, 255])
        }
    }
    pub struct NoBytes;
    impl Serialize for NoBytes {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(&[])
        }
    }
}
/// Every shape of the serde data model, against serde_json's pretty writer.
#[test]
fn the_whole_data_model_is_written_as_serde_json_writes_it() {
    let all = All {
        unit: (),
        unit_struct: Unit,
        newtype: Newtype(7),
        tuple: Tuple(-1, "t"),
        empty_tuple: (),
        empty: Empty {},
        externals: vec![
            External::A,
            External::B(3),
            External::C(1, 2),
            External::D { x: -5, y: vec![] },
            External::E(),
            External::F {},
        ],
        internals: vec![
            Internal::A,
            Internal::B { x: 1 },
            Internal::C(Inner2 { y: None }),
        ],
        adjacent: vec![Adjacent::A(vec![1]), Adjacent::A(vec![]), Adjacent::B],
        untagged: vec![Untagged::A(1.5), Untagged::B { z: true }],
        flat: Flat {
            a: 1,
            rest: [("r".to_owned(), json!({"s": []}))].into(),
            inner: Inner2 { y: Some(2) },
        },
        bytes: serde_bytes_like::Bytes,
        no_bytes: serde_bytes_like::NoBytes,
        chars: vec!['a', '"', '\n', 'é'],
        floats: vec![1.5, f32::NAN, f32::INFINITY, -0.0, 1e-7],
        doubles: vec![f64::NEG_INFINITY, 0.1, 1e21, -1e-300],
        ints: (
            i8::MIN,
            i16::MIN,
            i32::MIN,
            i64::MIN,
            i128::MIN,
            u8::MAX,
            u16::MAX,
            u32::MAX,
            u64::MAX,
            u128::MAX,
        ),
        int_keys: [(-1, 1), (2, 2)].into(),
        u128_keys: [(u128::MAX, 1)].into(),
        bool_keys: [(true, 1), (false, 0)].into(),
        char_keys: [('"', 1), ('k', 2)].into(),
        float_keys: vec![(1.5, 1)],
        unit_variant_keys: [(Key::First, 1), (Key::Second, 2)].into(),
        newtype_keys: [(KeyNewtype("n\"k"), 1)].into(),
        option_keys: [(Some("o"), 1)].into(),
        nested_empty: vec![
            vec![],
            vec![BTreeMap::new()],
            vec![[("x".to_owned(), 1)].into()],
        ],
        display: Displayed,
    };
    assert_eq!(fast(&all), reference(&all));
}

/// Keys serde_json refuses are refused here too.
#[test]
fn keys_serde_json_refuses_are_refused_here_too() {
    let float_keys: BTreeMap<String, BTreeMap<Key2, u8>> =
        [("f".to_owned(), [(Key2(f64::NAN), 1)].into())].into();
    assert_eq!(
        write_error(&float_keys),
        serde_json::to_string_pretty(&float_keys)
            .unwrap_err()
            .to_string()
    );
    let unit_keys: BTreeMap<(), u8> = [((), 1)].into();
    assert_eq!(
        write_error(&unit_keys),
        serde_json::to_string_pretty(&unit_keys)
            .unwrap_err()
            .to_string()
    );
    let seq_keys: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
    assert_eq!(
        write_error(&seq_keys),
        serde_json::to_string_pretty(&seq_keys)
            .unwrap_err()
            .to_string()
    );
}

/// An `f64` usable as a map key in a test.
#[derive(Serialize)]
struct Key2(f64);
impl PartialEq for Key2 {
    fn eq(&self, other: &Key2) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}
impl Eq for Key2 {}
impl PartialOrd for Key2 {
    fn partial_cmp(&self, other: &Key2) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key2 {
    fn cmp(&self, other: &Key2) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The message of the error writing `value` gives.
fn write_error<T: ?Sized + Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    write_pretty(&mut out, value).unwrap_err().to_string()
}

#[test]
fn a_large_value_is_flushed_on_the_way_and_whole_at_the_end() {
    /// Counts the writes the writer receives.
    struct Counting(Vec<u8>, usize);
    impl Write for Counting {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.1 += 1;
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let value: Vec<SharedJson> = (0..20_000)
        .map(|n| SharedJson::new(&json!({"n": n, "s": "some text", "a": [n, {"b": null}]})))
        .collect();
    let mut sink = Counting(Vec::new(), 0);
    write_pretty(&mut sink, &value).unwrap();
    assert!(sink.1 > 10, "{} writes", sink.1);
    assert_eq!(String::from_utf8(sink.0).unwrap(), reference(&value));
}

#[test]
fn escapes_are_found_at_every_position_and_length() {
    for len in 0..40 {
        assert!(!needs_escape(&vec![b'a'; len]), "{len}");
        // Bytes of multi-byte characters need no escape.
        assert!(!needs_escape("é".repeat(len).as_bytes()), "{len}");
        for at in 0..len {
            for bad in [b'"', b'\\', b'\n', 0, 0x1f] {
                let mut text = vec![b'a'; len];
                text[at] = bad;
                assert!(needs_escape(&text), "{len} {at} {bad}");
            }
            for fine in [b' ', 0x7f, 0x80, 0xff, b'/', b'!', b'#', b'[', b']'] {
                let mut text = vec![b'a'; len];
                text[at] = fine;
                assert!(!needs_escape(&text), "{len} {at} {fine}");
            }
        }
    }
}

#[test]
fn a_string_ends_at_its_first_unescaped_quote() {
    for prefix in 0..20 {
        for (body, end) in [
            (r#"abc""#, 4),
            (r#"a\"b""#, 5),
            (r#"\\""#, 3),
            (r#"\u0022""#, 7),
            (r#"""#, 1),
        ] {
            let text = format!("\"{}{body},", "x".repeat(prefix));
            assert_eq!(string_end(text.as_bytes(), 1), 1 + prefix + end, "{text}");
        }
        let open = format!("\"{}", "y".repeat(prefix));
        assert_eq!(string_end(open.as_bytes(), 1), open.len());
    }
}

/// Items written by [`chunked::serialize_in_chunks`] with small sizes, so
/// that short arrays take the two-thread path.
struct Chunks<T> {
    items: Vec<T>,
    chunk: usize,
    from: usize,
}

impl<T: Serialize + Sync> Serialize for Chunks<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        chunked::serialize_in_chunks(&self.items, self.chunk, self.from, serializer)
    }
}

#[test]
fn a_chunked_array_is_written_as_one_array_at_every_size_and_depth() {
    let item =
        |n: usize| SharedJson::new(&json!({"n": n, "s": "text", "a": [n, {"b": null}], "e": {}}));
    for len in 0..12 {
        for chunk in [1, 2, 3, 5] {
            let items: Vec<SharedJson> = (0..len).map(item).collect();
            let tree: Vec<Value> = (0..len)
                .map(|n| serde_json::to_value(item(n)).unwrap())
                .collect();
            let chunks = Chunks {
                items: items.clone(),
                chunk,
                from: 1,
            };
            assert_eq!(fast(&chunks), reference(&tree), "len {len} chunk {chunk}");
            // Nested: a member of an object inside an array inside an object.
            let nested = json!({"x": [{"items": tree, "after": 1}], "last": []});
            #[derive(Serialize)]
            struct Holder<'a> {
                items: &'a Chunks<SharedJson>,
                after: u8,
            }
            #[derive(Serialize)]
            struct Outer<'a> {
                x: [Holder<'a>; 1],
                last: [u8; 0],
            }
            let outer = Outer {
                x: [Holder {
                    items: &chunks,
                    after: 1,
                }],
                last: [],
            };
            assert_eq!(
                fast(&outer),
                reference(&nested),
                "nested, len {len} chunk {chunk}"
            );
            // Any other serializer sees a plain sequence.
            assert_eq!(
                reference(&outer),
                reference(&nested),
                "serde_json, len {len}"
            );
            assert_eq!(serde_json::to_value(&outer).unwrap(), nested);
        }
    }
}

/// Records the thread that writes it.
struct Where(std::sync::Mutex<Option<std::thread::ThreadId>>);

impl Serialize for Where {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        *self.0.lock().unwrap() = Some(std::thread::current().id());
        serializer.serialize_u8(1)
    }
}

fn wheres(n: usize) -> Vec<Where> {
    (0..n).map(|_| Where(std::sync::Mutex::new(None))).collect()
}

/// How many of `items` were written on another thread than this one.
fn written_elsewhere(items: &[Where]) -> usize {
    let here = std::thread::current().id();
    items
        .iter()
        .filter(|w| w.0.lock().unwrap().unwrap() != here)
        .count()
}

#[test]
fn a_long_array_is_chunked_through_the_report_writer_only_from_its_threshold() {
    /// An array as the report's model declares its long ones.
    #[derive(Serialize)]
    struct Model {
        #[serde(serialize_with = "serialize_chunked")]
        items: Vec<Where>,
    }
    let expected = |n: usize| reference(&json!({ "items": vec![1; n] }));
    // One item short of the threshold: all on this thread.
    let short = Model {
        items: wheres(chunked::CHUNKED_FROM - 1),
    };
    assert_eq!(fast(&short), expected(chunked::CHUNKED_FROM - 1));
    assert_eq!(written_elsewhere(&short.items), 0);
    // At the threshold: every other chunk on the second thread.
    let long = Model {
        items: wheres(chunked::CHUNKED_FROM),
    };
    assert_eq!(fast(&long), expected(chunked::CHUNKED_FROM));
    assert_eq!(written_elsewhere(&long.items), chunked::CHUNKED_FROM / 2);
}

#[test]
fn an_item_that_cannot_be_written_fails_the_write_on_either_thread() {
    // A map with a key that is not a string cannot be written as JSON.
    let bad: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
    let good: BTreeMap<Vec<u8>, u8> = BTreeMap::new();
    for bad_at in [0, 1, 2, 5] {
        let items: Vec<BTreeMap<Vec<u8>, u8>> = (0..6)
            .map(|i| {
                if i == bad_at {
                    bad.clone()
                } else {
                    good.clone()
                }
            })
            .collect();
        let chunks = Chunks {
            items,
            chunk: 1,
            from: 1,
        };
        assert!(
            write_error(&chunks).contains("key must be a string"),
            "bad at {bad_at}: {}",
            write_error(&chunks)
        );
        // Nothing is left pending for the next value.
        assert!(!handover::PENDING_CHUNKED.get());
        assert_eq!(fast(&json!([1])), "[\n  1\n]\n");
    }
}

#[test]
fn a_chunked_array_that_misses_this_serializer_is_a_plain_array() {
    let chunks = Chunks {
        items: vec![1, 2, 3],
        chunk: 1,
        from: 1,
    };
    assert_eq!(serde_json::to_string(&chunks).unwrap(), "[1,2,3]");
    assert!(!handover::PENDING_CHUNKED.get());
}

#[test]
fn every_other_chunk_is_written_on_a_second_thread() {
    let chunks = Chunks {
        items: wheres(6),
        chunk: 2,
        from: 1,
    };
    assert_eq!(fast(&chunks), reference(&[1; 6]));
    let here = std::thread::current().id();
    let threads: Vec<bool> = chunks
        .items
        .iter()
        .map(|w| w.0.lock().unwrap().unwrap() == here)
        .collect();
    // Chunks 0 and 2 here, chunk 1 (items 2 and 3) on the second thread.
    assert_eq!(threads, [true, true, false, false, true, true]);
    // Under another serializer, everything here.
    serde_json::to_string(&chunks).unwrap();
    assert_eq!(written_elsewhere(&chunks.items), 0);
}
