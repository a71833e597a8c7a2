//! `settings!`: a group of settings declared once. Each field is written once, with its doc
//! line, its flag attributes and its default; the macro writes from it
//!
//! - the group's settings (concrete values: the run's, as `config.json` records them);
//! - its layer (every field an `Option`): the command line's flags (`clap::Args`, behind the
//!   `cli` feature) and a config file's keys (serde), both spelled as the field;
//! - the fold of a layer into the settings, recording each field's [`Source`];
//! - the settings a resumed run may change (`[free]`) and the differences of the others.
//!
//! A field without a default (`tis_cap: f64`) is optional: `None` in the settings until a layer
//! sets it. A field holding another group (`overrides: ObjectiveOverrides / OverridesLayer`) is
//! written in the `groups { .. }` part and folded with it. A group of the verifier's options
//! (`answer: AnswerOptions / AnswerArgs`, an [`OptionGroup`] of `rlverify::options`) is written in
//! the `flatten { .. }` part: its flags and its keys are the group's own (`--extract`, `"extract"`
//! beside `"reward"`), so that an option the verifier adds reaches `rltrain` and its
//! `config.json` with no edit here. Fields written in the `after { .. }` part come after those
//! (the order of `config.json` and of the help).

use std::collections::BTreeMap;

use rlverify::options::OptionGroup;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a resolved value came from (`sources` in `config.json`), the layers by precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The built-in default.
    Default,
    /// The `--paper` preset.
    Preset,
    /// The defaults of a pretrained model (learning rate, schedule, lengths, checkpoints).
    Model,
    /// The user: a `--config` file or a flag.
    User,
}

/// Each setting's [`Source`], by its name (the flag's, with `_`: `lr`, `clip_low`).
pub type Sources = BTreeMap<String, Source>;

/// A setting that differs from a resumed run's: `(name, before, now)`.
pub type Change = (String, Value, Value);

/// What every group of settings can do, whatever its fields (written by `settings!`).
pub trait Group: Default {
    /// The group's layer: every field an `Option`.
    type Layer: Default;

    /// Sets the fields `layer` sets, recording `source` for each.
    fn fold(&mut self, layer: &Self::Layer, source: Source, sources: &mut Sources);

    /// Every setting's name, nested groups included.
    fn names(out: &mut Vec<&'static str>);

    /// The names of the settings a resumed run may change without `--allow-changes`.
    fn free(out: &mut Vec<&'static str>);

    /// The settings other than the free ones that differ from `before`.
    fn changes(&self, before: &Self, out: &mut Vec<Change>);

    /// A layer that sets every field to this group's value (optional fields when set).
    fn to_layer(&self) -> Self::Layer;

    /// The names of the settings `layer` sets.
    fn set_in(layer: &Self::Layer, out: &mut Vec<&'static str>);
}

/// A group of the verifier's options is a group of settings, whatever its fields: none free on
/// resume, each named as the verifier names it.
impl<T: OptionGroup + Serialize> Group for T {
    type Layer = T::Layer;

    fn fold(&mut self, layer: &T::Layer, source: Source, sources: &mut Sources) {
        for name in OptionGroup::fold(self, layer) {
            sources.insert(name.to_string(), source);
        }
    }

    fn names(out: &mut Vec<&'static str>) {
        out.extend(T::NAMES);
    }

    fn free(_: &mut Vec<&'static str>) {}

    fn changes(&self, before: &Self, out: &mut Vec<Change>) {
        let json = |v: &T| serde_json::to_value(v).unwrap_or(Value::Null);
        let (now, before) = (json(self), json(before));
        for name in T::NAMES {
            let (a, b) = (&before[*name], &now[*name]);
            if a != b {
                out.push((name.to_string(), a.clone(), b.clone()));
            }
        }
    }

    fn to_layer(&self) -> T::Layer {
        OptionGroup::to_layer(self)
    }

    fn set_in(layer: &T::Layer, out: &mut Vec<&'static str>) {
        out.extend(T::set_in(layer));
    }
}

/// Declares one group of settings; see the [module](self).
macro_rules! settings {
    (
        $(#[doc = $doc:literal])*
        $settings:ident / $layer:ident, heading $heading:literal {
            $(
                $(#[doc = $fdoc:literal])*
                $(#[arg($($arg:tt)*)])*
                $([$free:ident])? $field:ident : $ty:ty $(= $default:expr)?
            ),* $(,)?
        }
        $(groups {
            $(
                $(#[doc = $gdoc:literal])*
                $gfield:ident : $gty:ident / $glty:ident
            ),* $(,)?
        })?
        $(flatten {
            $(
                $(#[doc = $xdoc:literal])*
                $xfield:ident : $xty:ident / $xlty:ident
            ),* $(,)?
        })?
        $(after {
            $(
                $(#[doc = $afdoc:literal])*
                $(#[arg($($aarg:tt)*)])*
                $([$afree:ident])? $afield:ident : $aty:ty $(= $adefault:expr)?
            ),* $(,)?
        })?
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $settings {
            $(
                $(#[doc = $fdoc])*
                pub $field: $crate::config::declare::setting_ty!($ty $(, $default)?),
            )*
            $($(
                $(#[doc = $gdoc])*
                pub $gfield: $gty,
            )*)?
            $($(
                $(#[doc = $xdoc])*
                #[serde(flatten)]
                pub $xfield: $xty,
            )*)?
            $($(
                $(#[doc = $afdoc])*
                pub $afield: $crate::config::declare::setting_ty!($aty $(, $adefault)?),
            )*)?
        }

        impl Default for $settings {
            fn default() -> Self {
                Self {
                    $($field: $crate::config::declare::setting_default!($($default)?),)*
                    $($($gfield: <$gty>::default(),)*)?
                    $($($xfield: <$xty>::default(),)*)?
                    $($($afield: $crate::config::declare::setting_default!($($adefault)?),)*)?
                }
            }
        }

        #[doc = concat!("The layer of [`", stringify!($settings), "`]: each field set or not (a flag given, a key written).")]
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "cli", derive(clap::Args))]
        #[cfg_attr(feature = "cli", command(next_help_heading = $heading))]
        #[serde(default, deny_unknown_fields)]
        pub struct $layer {
            $(
                $(#[doc = $fdoc])*
                $(#[cfg_attr(feature = "cli", arg($($arg)*))])*
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
            $($(
                $(#[doc = $gdoc])*
                #[cfg_attr(feature = "cli", command(flatten))]
                #[serde(skip_serializing_if = "crate::config::declare::is_default")]
                pub $gfield: $glty,
            )*)?
            $($(
                $(#[doc = $xdoc])*
                #[cfg_attr(feature = "cli", command(flatten))]
                #[serde(flatten)]
                pub $xfield: $xlty,
            )*)?
            $($(
                $(#[doc = $afdoc])*
                $(#[cfg_attr(feature = "cli", arg($($aarg)*))])*
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $afield: Option<$aty>,
            )*)?
        }

        impl $crate::config::declare::Group for $settings {
            type Layer = $layer;

            fn fold(
                &mut self,
                layer: &$layer,
                source: $crate::config::declare::Source,
                sources: &mut $crate::config::declare::Sources,
            ) {
                $(
                    if let Some(value) = &layer.$field {
                        self.$field = value.clone().into();
                        sources.insert(stringify!($field).to_string(), source);
                    }
                )*
                $($(self.$gfield.fold(&layer.$gfield, source, sources);)*)?
                $($($crate::config::declare::Group::fold(&mut self.$xfield, &layer.$xfield, source, sources);)*)?
                $($(
                    if let Some(value) = &layer.$afield {
                        self.$afield = value.clone().into();
                        sources.insert(stringify!($afield).to_string(), source);
                    }
                )*)?
            }

            fn names(out: &mut Vec<&'static str>) {
                $(out.push(stringify!($field));)*
                $($(<$gty as $crate::config::declare::Group>::names(out);)*)?
                $($(<$xty as $crate::config::declare::Group>::names(out);)*)?
                $($(out.push(stringify!($afield));)*)?
            }

            #[allow(unused_variables)]
            fn free(out: &mut Vec<&'static str>) {
                $($(
                    let _ = stringify!($free);
                    out.push(stringify!($field));
                )?)*
                $($(<$gty as $crate::config::declare::Group>::free(out);)*)?
                $($(<$xty as $crate::config::declare::Group>::free(out);)*)?
                $($($(
                    let _ = stringify!($afree);
                    out.push(stringify!($afield));
                )?)*)?
            }

            fn changes(&self, before: &Self, out: &mut Vec<$crate::config::declare::Change>) {
                $(
                    if !$crate::config::declare::is_free!($($free)?) && self.$field != before.$field {
                        let json = |v| serde_json::to_value(v).unwrap_or(serde_json::Value::Null);
                        out.push((stringify!($field).to_string(), json(&before.$field), json(&self.$field)));
                    }
                )*
                $($(self.$gfield.changes(&before.$gfield, out);)*)?
                $($($crate::config::declare::Group::changes(&self.$xfield, &before.$xfield, out);)*)?
                $($(
                    if !$crate::config::declare::is_free!($($afree)?) && self.$afield != before.$afield {
                        let json = |v| serde_json::to_value(v).unwrap_or(serde_json::Value::Null);
                        out.push((stringify!($afield).to_string(), json(&before.$afield), json(&self.$afield)));
                    }
                )*)?
            }

            fn to_layer(&self) -> $layer {
                $layer {
                    $($field: $crate::config::declare::layer_value!(self.$field $(, $default)?),)*
                    $($($gfield: self.$gfield.to_layer(),)*)?
                    $($($xfield: $crate::config::declare::Group::to_layer(&self.$xfield),)*)?
                    $($($afield: $crate::config::declare::layer_value!(self.$afield $(, $adefault)?),)*)?
                }
            }

            fn set_in(layer: &$layer, out: &mut Vec<&'static str>) {
                $(
                    if layer.$field.is_some() {
                        out.push(stringify!($field));
                    }
                )*
                $($(<$gty as $crate::config::declare::Group>::set_in(&layer.$gfield, out);)*)?
                $($(<$xty as $crate::config::declare::Group>::set_in(&layer.$xfield, out);)*)?
                $($(
                    if layer.$afield.is_some() {
                        out.push(stringify!($afield));
                    }
                )*)?
            }
        }
    };
}
pub(crate) use settings;

/// The settings' type of a field: its own with a default, else an `Option` of it.
macro_rules! setting_ty {
    ($ty:ty) => { Option<$ty> };
    ($ty:ty, $default:expr) => { $ty };
}
pub(crate) use setting_ty;

/// A field's default: the one written, else `None`.
macro_rules! setting_default {
    () => {
        None
    };
    ($default:expr) => {
        $default
    };
}
pub(crate) use setting_default;

/// A field's value as a layer sets it.
macro_rules! layer_value {
    ($value:expr) => {
        $value.clone()
    };
    ($value:expr, $default:expr) => {
        Some($value.clone())
    };
}
pub(crate) use layer_value;

/// Whether a field is marked `[free]`.
macro_rules! is_free {
    () => {
        false
    };
    (free) => {
        true
    };
}
pub(crate) use is_free;

/// Whether a nested layer sets nothing (left out of a layer's JSON).
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}
