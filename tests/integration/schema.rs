//! A validator for the part of JSON Schema (2020-12, as OpenAPI 3.1 has
//! it) that `docs/openapi.json` uses, for the test that holds the server's
//! real answers to that document (server.rs).
//!
//! Why not the `jsonschema` crate: without its default features it still
//! brings about twenty crates (big-number fractions, a second regex engine,
//! Unicode tables, a URI resolver) into every test build, for a document
//! whose schemas use a dozen keywords. Here is that dozen, and any other
//! keyword is an error rather than silently ignored, so the document
//! cannot come to rely on a check that is not made.

use regex::Regex;
use serde_json::Value as Json;

/// The places where `value` breaks `schema`, each as `pointer: what`
/// (none: it conforms). `root` is the document that `$ref`s point into.
pub fn violations(root: &Json, schema: &Json, value: &Json) -> Vec<String> {
    let mut found = Vec::new();
    check(root, schema, value, "", &mut found);
    found
}

/// The object at a local `$ref` (`#/components/schemas/Name`).
pub fn resolve<'a>(root: &'a Json, reference: &str) -> &'a Json {
    let pointer = reference
        .strip_prefix('#')
        .unwrap_or_else(|| panic!("{reference}: only local references are supported"));
    root.pointer(pointer)
        .unwrap_or_else(|| panic!("{reference}: no such place in the document"))
}

/// Whether `value` is of the JSON Schema type `name`.
fn has_type(value: &Json, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => panic!("unknown type {name:?}"),
    }
}

fn check(root: &Json, schema: &Json, value: &Json, at: &str, found: &mut Vec<String>) {
    let Some(keywords) = schema.as_object() else {
        found.push(format!("{at}: the schema {schema} is not an object"));
        return;
    };
    let mut fail = |what: String| found.push(format!("{at}: {what}"));
    let mut nested = Vec::new();
    for (keyword, want) in keywords {
        match keyword.as_str() {
            // Annotations: they check nothing.
            "description" | "title" => {}
            "$ref" => check(
                root,
                resolve(root, want.as_str().expect("a string $ref")),
                value,
                at,
                &mut nested,
            ),
            "type" => {
                let names: Vec<&str> = match want {
                    Json::String(name) => vec![name],
                    _ => want
                        .as_array()
                        .expect("a type or a list of types")
                        .iter()
                        .map(|t| t.as_str().expect("a type name"))
                        .collect(),
                };
                if !names.iter().any(|name| has_type(value, name)) {
                    fail(format!("{value} is not of type {want}"));
                }
            }
            "enum" => {
                if !want.as_array().expect("an enum list").contains(value) {
                    fail(format!("{value} is not one of {want}"));
                }
            }
            "pattern" => {
                let pattern = Regex::new(want.as_str().expect("a pattern")).expect("a regex");
                if let Some(text) = value.as_str().filter(|t| !pattern.is_match(t)) {
                    fail(format!("{text:?} does not match {pattern}"));
                }
            }
            "minimum" | "maximum" => {
                let bound = want.as_f64().expect("a number");
                let out = |x: f64| {
                    if keyword == "minimum" {
                        x < bound
                    } else {
                        x > bound
                    }
                };
                if let Some(x) = value.as_f64().filter(|&x| out(x)) {
                    fail(format!("{x} is beyond the {keyword} {bound}"));
                }
            }
            "minItems" | "maxItems" => {
                let bound = want.as_u64().expect("a count") as usize;
                let out = |n: usize| {
                    if keyword == "minItems" {
                        n < bound
                    } else {
                        n > bound
                    }
                };
                if let Some(n) = value.as_array().map(Vec::len).filter(|&n| out(n)) {
                    fail(format!("{n} items, beyond the {keyword} {bound}"));
                }
            }
            "items" => {
                for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                    check(root, want, item, &format!("{at}/{i}"), &mut nested);
                }
            }
            "required" => {
                let Some(object) = value.as_object() else {
                    continue;
                };
                for name in want.as_array().expect("a list of names") {
                    let name = name.as_str().expect("a property name");
                    if !object.contains_key(name) {
                        fail(format!("required property {name:?} missing"));
                    }
                }
            }
            "properties" => {
                let Some(object) = value.as_object() else {
                    continue;
                };
                for (name, property) in want.as_object().expect("properties by name") {
                    if let Some(v) = object.get(name) {
                        check(root, property, v, &format!("{at}/{name}"), &mut nested);
                    }
                }
            }
            "additionalProperties" => {
                let Some(object) = value.as_object() else {
                    continue;
                };
                let known = keywords.get("properties").and_then(Json::as_object);
                let others = object
                    .iter()
                    .filter(|(name, _)| !known.is_some_and(|k| k.contains_key(*name)));
                for (name, v) in others {
                    match want {
                        Json::Bool(true) => {}
                        Json::Bool(false) => {
                            fail(format!("property {name:?} is not in the schema"))
                        }
                        _ => check(root, want, v, &format!("{at}/{name}"), &mut nested),
                    }
                }
            }
            "propertyNames" => {
                for name in value.as_object().into_iter().flat_map(|o| o.keys()) {
                    let name_json = Json::String(name.clone());
                    check(root, want, &name_json, &format!("{at}/{name}"), &mut nested);
                }
            }
            "oneOf" => {
                let alternatives = want.as_array().expect("a list of schemas");
                let reasons: Vec<Vec<String>> = alternatives
                    .iter()
                    .map(|schema| violations(root, schema, value))
                    .collect();
                let matching = reasons.iter().filter(|r| r.is_empty()).count();
                if matching != 1 {
                    fail(format!(
                        "{value} matches {matching} of oneOf's schemas, not one: {reasons:?}"
                    ));
                }
            }
            _ => fail(format!(
                "the schema keyword {keyword:?} is not one this validator checks"
            )),
        }
    }
    found.append(&mut nested);
}
