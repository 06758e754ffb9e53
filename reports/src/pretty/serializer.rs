//! A serde serializer writing what `serde_json::Serializer` with a two-space
//! `PrettyFormatter` writes, for the whole serde data model, into a buffer it
//! flushes to the caller's writer. The branches mirror serde_json 1's
//! `Serializer`, `Compound` and `MapKeySerializer` one for one.

use std::io::{self, Write};
use std::mem;

use serde::ser::{self, Error as _, Serialize};
use serde_json::ser::{CompactFormatter, Formatter};
use serde_json::Error;

use super::handover::{
    CHUNKED_TOKEN, DEPTH, PASTED_TOKEN, PENDING, PENDING_CHUNKED, SHARED_TOKEN, TAIL,
};
use super::out::Out;
use super::reindent::{needs_escape, reindent};

/// True when `S` is this module's serializer (`&mut PrettySerializer`).
///
/// The type's name is compared because `TypeId` needs `'static` types and the
/// serializer borrows its writer. The standard library does not promise that
/// names are unique, but this one names a type private to this module, and a
/// false match is still caught by [`write_shared`].
pub(crate) fn is_report_serializer<S: serde::Serializer>() -> bool {
    std::any::type_name::<S>() == std::any::type_name::<&mut PrettySerializer<'static>>()
}

/// Buffered bytes written through to the caller's writer once past this.
const FLUSH_AT: usize = 1 << 16;

/// The name under which serde_json's `RawValue` serializes (serde_json pastes
/// its text as it is). Only for exactness with other raw values: the report
/// holds none.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

type Result<T> = std::result::Result<T, Error>;

/// The report's pretty JSON serializer (see the module docs of `pretty`).
pub(crate) struct PrettySerializer<'w> {
    /// Bytes not yet written to `sink`.
    out: Out,
    sink: &'w mut dyn Write,
    /// Nesting depth of the container being written.
    depth: usize,
    /// What the next string is, when it is not a string value.
    next_str: NextStr,
    /// True between taking a chunked array and opening its pasted sequence.
    pasting: bool,
}

/// How the serializer's `serialize_str` takes the next string.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NextStr {
    /// A string value, quoted and escaped.
    Value,
    /// Compact JSON text of a shared value, re-indented.
    Shared,
    /// The text of a `RawValue`, pasted as it is.
    Raw,
    /// A chunk of a chunked array, as bytes, written through as they are.
    Pasted,
}

impl<'w> PrettySerializer<'w> {
    pub(crate) fn new(sink: &'w mut dyn Write) -> PrettySerializer<'w> {
        PrettySerializer {
            out: Out::with_capacity(FLUSH_AT + FLUSH_AT / 4),
            sink,
            depth: 0,
            next_str: NextStr::Value,
            pasting: false,
        }
    }

    /// A serializer for part of a document: items of an array at `depth`,
    /// written into `sink` by [`PrettySerializer::separator`] and the items'
    /// own serialization, ended by [`PrettySerializer::finish_nested`].
    pub(crate) fn nested(sink: &'w mut dyn Write, depth: usize) -> PrettySerializer<'w> {
        PrettySerializer {
            depth,
            ..PrettySerializer::new(sink)
        }
    }

    /// Before an item of the array the serializer is nested in: the comma
    /// (unless it is the array's first) and the line break and indent.
    pub(crate) fn separator(&mut self, first: bool) {
        self.out.separator(first, self.depth);
    }

    /// Writes everything buffered (no final newline: the text goes on).
    pub(crate) fn finish_nested(mut self) -> io::Result<()> {
        self.flush_out()
    }

    /// Writes the buffered bytes through to the sink and empties the buffer.
    fn flush_out(&mut self) -> io::Result<()> {
        self.sink.write_all(self.out.as_bytes())?;
        self.out.clear();
        Ok(())
    }

    /// Writes the final newline and everything buffered, and flushes the writer.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.out.push(b'\n');
        self.sink.write_all(self.out.as_bytes())?;
        self.sink.flush()
    }

    /// Writes the buffer through once it is full enough. Called between the
    /// elements of containers, so the buffer stays near its capacity.
    #[inline]
    fn maybe_flush(&mut self) -> Result<()> {
        if self.out.len() < FLUSH_AT {
            return Ok(());
        }
        self.flush_out().map_err(Error::io)
    }

    /// A string quoted and escaped as serde_json does.
    #[inline]
    fn string(&mut self, text: &str) -> Result<()> {
        if needs_escape(text.as_bytes()) {
            // Rare: serde_json's own escaping, the same in every formatter.
            return serde_json::to_writer(&mut self.out, text);
        }
        self.out.quoted(text.as_bytes());
        Ok(())
    }

    /// A member name with its separator and indent before it and `": "` after.
    #[inline]
    fn member_name(&mut self, first: bool, name: &str) -> Result<()> {
        self.out.separator(first, self.depth);
        self.string(name)?;
        self.out.colon();
        Ok(())
    }

    /// A number written by serde_json's formatter code (as the pretty one does).
    #[inline]
    fn number(
        &mut self,
        write: impl FnOnce(&mut CompactFormatter, &mut Out) -> io::Result<()>,
    ) -> Result<()> {
        write(&mut CompactFormatter, &mut self.out).map_err(Error::io)
    }

    /// Opens an object or an array.
    #[inline]
    fn open(&mut self, byte: u8) {
        self.depth += 1;
        self.out.push(byte);
    }

    /// Closes an object or an array; one with elements ends on its own line.
    #[inline]
    fn close(&mut self, byte: u8, had_elements: bool) {
        self.depth -= 1;
        if had_elements {
            self.out.newline_indent(self.depth);
        }
        self.out.push(byte);
    }

    /// `{"variant": ` around an enum variant's content.
    fn open_variant(&mut self, variant: &str) -> Result<()> {
        self.open(b'{');
        self.member_name(true, variant)
    }

    /// A container opened by `byte`: empty at once when its length is zero.
    fn container<'a>(
        &'a mut self,
        byte: u8,
        len: Option<usize>,
        variant: bool,
    ) -> Compound<'a, 'w> {
        self.open(byte);
        let state = if len == Some(0) {
            self.close(closing(byte), false);
            State::Empty
        } else {
            State::First
        };
        Compound {
            ser: self,
            state,
            close: closing(byte),
            variant,
        }
    }
}

/// The byte closing a container opened by `byte`.
fn closing(byte: u8) -> u8 {
    if byte == b'{' {
        b'}'
    } else {
        b']'
    }
}

impl<'a, 'w> ser::Serializer for &'a mut PrettySerializer<'w> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'w>;
    type SerializeTuple = Compound<'a, 'w>;
    type SerializeTupleStruct = Compound<'a, 'w>;
    type SerializeTupleVariant = Compound<'a, 'w>;
    type SerializeMap = Compound<'a, 'w>;
    type SerializeStruct = Compound<'a, 'w>;
    type SerializeStructVariant = Compound<'a, 'w>;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out.extend(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.number(|f, out| f.write_i8(out, v))
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.number(|f, out| f.write_i16(out, v))
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.number(|f, out| f.write_i32(out, v))
    }

    #[inline]
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.number(|f, out| f.write_i64(out, v))
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.number(|f, out| f.write_i128(out, v))
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.number(|f, out| f.write_u8(out, v))
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.number(|f, out| f.write_u16(out, v))
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.number(|f, out| f.write_u32(out, v))
    }

    #[inline]
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.number(|f, out| f.write_u64(out, v))
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        self.number(|f, out| f.write_u128(out, v))
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        if !v.is_finite() {
            return self.serialize_unit();
        }
        self.number(|f, out| f.write_f32(out, v))
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return self.serialize_unit();
        }
        self.number(|f, out| f.write_f64(out, v))
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        match mem::replace(&mut self.next_str, NextStr::Value) {
            NextStr::Value => self.string(v),
            NextStr::Shared => {
                let depth = reindent(&mut self.out, v.as_bytes(), self.depth);
                if let Some(tail) = TAIL.take() {
                    reindent(&mut self.out, tail.as_bytes(), depth);
                }
                Ok(())
            }
            NextStr::Raw => {
                self.out.extend(v.as_bytes());
                Ok(())
            }
            NextStr::Pasted => Err(Error::custom("a pasted chunk given as a string")),
        }
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        if self.next_str == NextStr::Pasted {
            self.next_str = NextStr::Value;
            // A chunk of a chunked array, written by this serializer: what
            // is buffered goes first, then the chunk straight to the sink.
            self.flush_out().map_err(Error::io)?;
            return self.sink.write_all(v).map_err(Error::io);
        }
        let mut seq = ser::Serializer::serialize_seq(self, Some(v.len()))?;
        for byte in v {
            ser::SerializeSeq::serialize_element(&mut seq, byte)?;
        }
        ser::SerializeSeq::end(seq)
    }

    #[inline]
    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }

    #[inline]
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    #[inline]
    fn serialize_unit(self) -> Result<()> {
        self.out.extend(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    #[inline]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.string(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<()> {
        // A shared value's text, when `write_shared` hands it over.
        if name == SHARED_TOKEN && PENDING.replace(false) {
            self.next_str = NextStr::Shared;
            value.serialize(&mut *self)?;
            if mem::replace(&mut self.next_str, NextStr::Value) != NextStr::Value {
                return Err(Error::custom("a shared JSON value without its text"));
            }
            return Ok(());
        }
        // A long array's items, when `serialize_chunked` hands them over.
        if name == CHUNKED_TOKEN && PENDING_CHUNKED.replace(false) {
            DEPTH.set(Some(self.depth));
            self.pasting = true;
            let written = value.serialize(&mut *self);
            DEPTH.set(None);
            if mem::replace(&mut self.pasting, false) {
                return Err(Error::custom("a chunked array without its chunks"));
            }
            return written;
        }
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.open_variant(variant)?;
        value.serialize(&mut *self)?;
        self.close(b'}', true);
        Ok(())
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, 'w>> {
        Ok(self.container(b'[', len, false))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'w>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Compound<'a, 'w>> {
        if name == PASTED_TOKEN && mem::replace(&mut self.pasting, false) {
            self.open(b'[');
            return Ok(Compound {
                ser: self,
                state: State::Pasting,
                close: b']',
                variant: false,
            });
        }
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'w>> {
        self.open_variant(variant)?;
        Ok(self.container(b'[', Some(len), true))
    }

    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, 'w>> {
        Ok(self.container(b'{', len, false))
    }

    #[inline]
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'a, 'w>> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound {
                ser: self,
                state: State::Raw,
                close: b'}',
                variant: false,
            });
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'w>> {
        self.open_variant(variant)?;
        Ok(self.container(b'{', Some(len), true))
    }
}

/// Where a container is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Opened and closed at once (its length was zero).
    Empty,
    /// No element yet.
    First,
    /// At least one element.
    Rest,
    /// A `RawValue`: its one field is its text.
    Raw,
    /// A chunked array's sequence of pasted chunks, none yet.
    Pasting,
    /// A chunked array's sequence of pasted chunks, at least one.
    Pasted,
}

/// An object or array being written.
pub(crate) struct Compound<'a, 'w> {
    ser: &'a mut PrettySerializer<'w>,
    state: State,
    /// `}` or `]`.
    close: u8,
    /// Inside `{"variant": …}`, closed after it.
    variant: bool,
}

impl Compound<'_, '_> {
    /// An item of an array.
    #[inline]
    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.ser
            .out
            .separator(self.state == State::First, self.ser.depth);
        self.state = State::Rest;
        value.serialize(&mut *self.ser)?;
        self.ser.maybe_flush()
    }

    /// Closes the container (and the variant around it).
    #[inline]
    fn end(self) -> Result<()> {
        match self.state {
            State::Empty | State::Raw => {}
            State::First | State::Pasting => self.ser.close(self.close, false),
            State::Rest | State::Pasted => self.ser.close(self.close, true),
        }
        if self.variant {
            self.ser.close(b'}', true);
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    #[inline]
    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        if matches!(self.state, State::Pasting | State::Pasted) {
            self.ser.next_str = NextStr::Pasted;
            let written = value.serialize(&mut *self.ser);
            if mem::replace(&mut self.ser.next_str, NextStr::Value) != NextStr::Value {
                return Err(Error::custom("expected a pasted chunk"));
            }
            self.state = State::Pasted;
            return written;
        }
        self.element(value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.ser
            .out
            .separator(self.state == State::First, self.ser.depth);
        self.state = State::Rest;
        key.serialize(KeySerializer { ser: self.ser })
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.ser.out.colon();
        value.serialize(&mut *self.ser)?;
        self.ser.maybe_flush()
    }

    #[inline]
    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        if self.state == State::Raw {
            if key != RAW_VALUE_TOKEN {
                return Err(Error::custom("expected value"));
            }
            self.ser.next_str = NextStr::Raw;
            let written = value.serialize(&mut *self.ser);
            if mem::replace(&mut self.ser.next_str, NextStr::Value) != NextStr::Value {
                return Err(Error::custom("expected RawValue"));
            }
            return written;
        }
        let first = self.state == State::First;
        self.state = State::Rest;
        self.ser.member_name(first, key)?;
        value.serialize(&mut *self.ser)?;
        self.ser.maybe_flush()
    }

    #[inline]
    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

/// A map's key, as serde_json's `MapKeySerializer` writes it: strings as
/// they are, numbers and booleans quoted, anything else refused.
struct KeySerializer<'a, 'w> {
    ser: &'a mut PrettySerializer<'w>,
}

fn key_must_be_a_string() -> Error {
    Error::custom("key must be a string")
}

impl KeySerializer<'_, '_> {
    /// A number or a boolean written by serde_json's formatter code, quoted.
    fn quoted(
        self,
        write: impl FnOnce(&mut CompactFormatter, &mut Out) -> io::Result<()>,
    ) -> Result<()> {
        self.ser.out.push(b'"');
        self.ser.number(write)?;
        self.ser.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for KeySerializer<'_, '_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        self.ser.string(v)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.ser.string(variant)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.quoted(|f, out| f.write_bool(out, v))
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.quoted(|f, out| f.write_i8(out, v))
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.quoted(|f, out| f.write_i16(out, v))
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.quoted(|f, out| f.write_i32(out, v))
    }

    fn serialize_i64(self, v: i64) -> Result<()> {
        self.quoted(|f, out| f.write_i64(out, v))
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.quoted(|f, out| f.write_i128(out, v))
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.quoted(|f, out| f.write_u8(out, v))
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.quoted(|f, out| f.write_u16(out, v))
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.quoted(|f, out| f.write_u32(out, v))
    }

    fn serialize_u64(self, v: u64) -> Result<()> {
        self.quoted(|f, out| f.write_u64(out, v))
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        self.quoted(|f, out| f.write_u128(out, v))
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        if !v.is_finite() {
            return Err(Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ));
        }
        self.quoted(|f, out| f.write_f32(out, v))
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ));
        }
        self.quoted(|f, out| f.write_f64(out, v))
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.ser.string(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_must_be_a_string())
    }
}
