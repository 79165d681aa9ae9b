//! The `tool!` declaration macro and what it produces: a [`BuiltinTool`] whose handler type follows its effect.

use quire_core::{Reader, Writer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;

/// What a tool does to the workspace. It must be stated for every tool; it picks the handler's signature and the
/// transaction it runs in, and consumers derive hints from it (MCP's `readOnlyHint`, `destructiveHint`, approval
/// prompts in the sidebar).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Only reads. Runs in a read transaction with a [`Reader`].
    ReadOnly,
    /// Writes, and the write can be undone in place (edit, move, tag, create).
    Mutating,
    /// Writes something a user would want to confirm first (moving a note to the trash). Runs like `Mutating`.
    Destructive,
}

impl Effect {
    /// Whether the tool only reads.
    pub fn is_read_only(self) -> bool {
        self == Effect::ReadOnly
    }

    /// The word used in declarations and listings: `read_only`, `mutating`, `destructive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::ReadOnly => "read_only",
            Effect::Mutating => "mutating",
            Effect::Destructive => "destructive",
        }
    }
}

/// A built-in tool as a Rust type: its name, and the types of its input and output. The `tool!` macro implements it
/// for the unit type `Tool` it declares beside each tool (`quire_tools::notes::read_note::Tool`, re-exported as
/// [`crate::builtin::ReadNote`]). [`crate::ToolRegistry::call_typed`] and
/// [`crate::ToolRegistry::read_as_user_typed`] take it, so a Rust caller passes a struct and gets one back, with the
/// same checks, budget and errors as a call by name.
pub trait TypedTool {
    /// The tool's name, as models and MCP clients call it.
    const NAME: &'static str;
    /// Its arguments.
    type Input: Serialize;
    /// Its output.
    type Output: DeserializeOwned;
}

pub(crate) type ReadHandler = fn(&Reader<'_>, Value) -> Result<Value, ToolError>;
pub(crate) type WriteHandler = fn(&mut Writer<'_>, Value) -> Result<Value, ToolError>;

/// A handler, typed by the effect: there is no way to give a read-only tool a `Writer`.
#[derive(Clone, Copy)]
pub(crate) enum Handler {
    Read(ReadHandler),
    Write(WriteHandler),
}

/// A built-in tool as the `tool!` macro declares it.
#[derive(Clone, Copy)]
pub(crate) struct BuiltinTool {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) effect: Effect,
    pub(crate) input_schema: fn() -> Value,
    pub(crate) output_schema: fn() -> Value,
    pub(crate) handler: Handler,
    /// A read of one note (declared `quick: true`): async consumers run it where they are instead of handing it to
    /// a blocking thread, whose two thread wake-ups cost more than the read usually does (tens of microseconds). It
    /// holds the async worker for its whole run: milliseconds for a note of megabytes or with many unresolved
    /// links, and as long as the workspace's pool makes it wait for a connection when every one is in use.
    pub(crate) quick: bool,
    /// What the registry runs before the tool's transaction, outside it (declared `prepare: f`): for
    /// `semantic_search_notes`, quire-core's freshness rule of the semantic index. Its failure is the tool's to
    /// report, so it returns nothing.
    pub(crate) prepare: Option<fn(&quire_core::Workspace)>,
}

/// The `prepare` a declaration gave, if any (the macro passes zero or one).
pub(crate) const fn first(given: &[fn(&quire_core::Workspace)]) -> Option<fn(&quire_core::Workspace)> {
    match given {
        [f, ..] => Some(*f),
        [] => None,
    }
}

/// Declares a built-in tool in the file that holds it:
///
/// ```text
/// tool! {
///     /// Description for the model: what the tool does and when to use it.
///     name: "create_note",
///     title: "Create note",
///     effect: mutating,          // or read_only, destructive; leaving it out does not compile
///     // quick: true,            // read_only only: costs about one note's read (see BuiltinTool::quick)
///     // prepare: f,             // read_only only: fn(&Workspace) run before the read, outside it
///     input: Input,              // Deserialize + JsonSchema, every field described
///     output: NoteInfo,          // Serialize + JsonSchema
///     run: run,                  // fn(&mut Writer, Input) -> Result<NoteInfo, ToolError>
/// }
/// ```
///
/// A `read_only` tool's `run` receives `&Reader`, which has no write methods: declaring a writing tool read-only
/// is a type error.
macro_rules! tool {
    (@make $handler:ident, $view:ty, $effect:expr, $quick:expr, $prepare:expr,
        [$($doc:literal)*], $name:literal, $title:literal, $input:ty, $output:ty, $run:path) => {
        pub(crate) const TOOL: $crate::declare::BuiltinTool = $crate::declare::BuiltinTool {
            name: $name,
            title: $title,
            description: concat!($($doc, "\n"),*),
            effect: $effect,
            input_schema: $crate::schema::portable_schema_for::<$input>,
            output_schema: $crate::schema::output_schema_for::<$output>,
            handler: $crate::declare::Handler::$handler({
                fn handler(view: $view, args: ::serde_json::Value) -> Result<::serde_json::Value, $crate::ToolError> {
                    let input: $input = $crate::args::parse($name, args, $crate::schema::portable_schema_for::<$input>)?;
                    let output: $output = $run(view, input)?;
                    $crate::args::output(output)
                }
                handler
            }),
            quick: $quick,
            prepare: $prepare,
        };

        /// This tool as a type, for typed calls from Rust (see [`TypedTool`](crate::TypedTool)).
        #[derive(Debug, Clone, Copy)]
        pub struct Tool;

        impl $crate::TypedTool for Tool {
            const NAME: &'static str = $name;
            type Input = $input;
            type Output = $output;
        }
    };
    (
        $(#[doc = $doc:literal])*
        name: $name:literal,
        title: $title:literal,
        effect: read_only,
        $(quick: $quick:literal,)?
        $(prepare: $prepare:path,)?
        input: $input:ty,
        output: $output:ty,
        run: $run:path $(,)?
    ) => {
        tool!(@make Read, &::quire_core::Reader<'_>, $crate::Effect::ReadOnly, false $(|| $quick)?,
            $crate::declare::first(&[$($prepare as fn(&::quire_core::Workspace))?]),
            [$($doc)*], $name, $title, $input, $output, $run);
    };
    (
        $(#[doc = $doc:literal])*
        name: $name:literal,
        title: $title:literal,
        effect: mutating,
        input: $input:ty,
        output: $output:ty,
        run: $run:path $(,)?
    ) => {
        tool!(@make Write, &mut ::quire_core::Writer<'_>, $crate::Effect::Mutating, false, None,
            [$($doc)*], $name, $title, $input, $output, $run);
    };
    (
        $(#[doc = $doc:literal])*
        name: $name:literal,
        title: $title:literal,
        effect: destructive,
        input: $input:ty,
        output: $output:ty,
        run: $run:path $(,)?
    ) => {
        tool!(@make Write, &mut ::quire_core::Writer<'_>, $crate::Effect::Destructive, false, None,
            [$($doc)*], $name, $title, $input, $output, $run);
    };
}
