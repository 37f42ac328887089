//! Keeps src/lib.rs in step with ravel.h: parses the header's text and
//! checks that every RAVEL_API function is declared here with the same
//! parameter and return types, every `typedef struct` has an opaque struct
//! and every RAVEL_ constant has the same value -- and that nothing is
//! declared here that the header does not have.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The header: a copy inside the crate (a published crate) if present,
/// else the repository's include/ravel.h.
fn header_text() -> String {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let copy = manifest.join("amalgamation/ravel.h");
    let path = if copy.is_file() { copy } else { manifest.join("../../../include/ravel.h") };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn rust_text() -> String {
    include_str!("../src/lib.rs").to_string()
}

/// TEXT without /* */ and // comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").expect("unterminated comment");
            rest = &after[end + 2..];
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Splits a C declaration like "const char *name" into (type, name).
fn split_c_decl(decl: &str) -> (String, String) {
    let decl = decl.trim();
    let name_start = decl.rfind(|c: char| !is_ident_char(c)).map_or(0, |i| i + 1);
    (decl[..name_start].to_string(), decl[name_start..].to_string())
}

/// The Rust spelling of a C type of ravel.h ("const char *" ->
/// "*const c_char", "ravel_db **" -> "*mut *mut ravel_db", "const void
/// *const *" -> "*const *const c_void"), whitespace removed; "" for a void
/// return.  Each pointer is `*const` when what it points to is const: the
/// base type for the innermost, the pointer a `const` follows otherwise.
fn rust_type_of_c(c_type: &str) -> String {
    let spaced = c_type.replace('*', " * ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let first_star = tokens.iter().position(|t| *t == "*").unwrap_or(tokens.len());
    let base_words = &tokens[..first_star];
    let base_is_const = base_words.contains(&"const");
    let base = *base_words.iter().rfind(|w| **w != "const").expect("type without a name");
    // pointee_const[i]: whether what pointer level i points to is const
    let mut pointee_const = vec![base_is_const];
    for (at, token) in tokens.iter().enumerate().skip(first_star) {
        if *token == "*" {
            pointee_const.push(tokens.get(at + 1) == Some(&"const"));
        }
    }
    let stars = pointee_const.len() - 1;
    let mut ty = match base {
        "void" if stars == 0 => return String::new(),
        "void" => "c_void".to_string(),
        "char" => "c_char".to_string(),
        "int" => "c_int".to_string(),
        "size_t" => "usize".to_string(),
        "uint64_t" => "u64".to_string(),
        "uint32_t" => "u32".to_string(),
        other if other.starts_with("ravel_") => other.to_string(),
        other => panic!("ravel.h uses a type this test does not know: {other}"),
    };
    for level in 0..stars {
        let pointer = if pointee_const[level] { "*const" } else { "*mut" };
        ty = format!("{pointer}{ty}");
    }
    ty
}

#[test]
fn c_types_map_to_their_rust_spelling() {
    assert_eq!(rust_type_of_c("int"), "c_int");
    assert_eq!(rust_type_of_c("void"), "");
    assert_eq!(rust_type_of_c("const char *"), "*constc_char");
    assert_eq!(rust_type_of_c("char **"), "*mut*mutc_char");
    assert_eq!(rust_type_of_c("const char **"), "*mut*constc_char");
    assert_eq!(rust_type_of_c("ravel_db **"), "*mut*mutravel_db");
    assert_eq!(rust_type_of_c("const void *const *"), "*const*constc_void");
    assert_eq!(rust_type_of_c("void *const"), "*mutc_void");
}

/// Name -> (parameter types, return type), in Rust spelling.
type Signatures = BTreeMap<String, (Vec<String>, String)>;

fn header_functions(header: &str) -> Signatures {
    let code: String = strip_comments(header)
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Signatures::new();
    for statement in code.split(';') {
        let Some(at) = statement.find("RAVEL_API") else { continue };
        let decl = &statement[at + "RAVEL_API".len()..];
        let open = decl.find('(').expect("RAVEL_API without a parameter list");
        let close = decl.rfind(')').unwrap();
        let (ret, name) = split_c_decl(&decl[..open]);
        let params = decl[open + 1..close].trim();
        let types = if params == "void" {
            Vec::new()
        } else {
            params.split(',').map(|p| rust_type_of_c(&split_c_decl(p).0)).collect()
        };
        assert!(out.insert(name.clone(), (types, rust_type_of_c(&ret))).is_none(), "{name} twice");
    }
    out
}

fn rust_functions(rust: &str) -> Signatures {
    let code = strip_comments(rust);
    let mut out = Signatures::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub fn ") {
        let decl_end = rest[at..].find(';').unwrap() + at;
        let decl = &rest[at + "pub fn ".len()..decl_end];
        rest = &rest[decl_end..];
        let open = decl.find('(').unwrap();
        let close = decl.rfind(')').unwrap();
        let name = decl[..open].trim().to_string();
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        let types = decl[open + 1..close]
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| squeeze(p.split_once(':').expect("parameter without a type").1))
            .collect();
        let ret = decl[close + 1..].trim().strip_prefix("->").map_or(String::new(), squeeze);
        assert!(out.insert(name.clone(), (types, ret)).is_none(), "{name} twice");
    }
    out
}

#[test]
fn every_function_of_the_header_is_declared_with_its_signature() {
    let header = header_functions(&header_text());
    let rust = rust_functions(&rust_text());
    assert!(header.len() >= 50, "parsed only {} functions from ravel.h", header.len());
    for (name, sig) in &header {
        match rust.get(name) {
            None => panic!("{name} is declared in ravel.h but not in ravel-kv-sys"),
            Some(r) => assert_eq!(r, sig, "{name}: (parameter types, return type) differ"),
        }
    }
    for name in rust.keys() {
        assert!(header.contains_key(name), "{name} is declared in ravel-kv-sys but not in ravel.h");
    }
}

#[test]
fn every_opaque_type_of_the_header_is_declared() {
    let header = strip_comments(&header_text());
    let rust = strip_comments(&rust_text());
    let mut count = 0;
    for line in header.lines() {
        let words: Vec<&str> =
            line.split(|c: char| c.is_whitespace() || c == ';').filter(|w| !w.is_empty()).collect();
        if let ["typedef", "struct", tag, name] = words[..] {
            assert_eq!(tag, name);
            assert!(rust.contains(&format!("pub struct {name} {{")), "{name} missing");
            count += 1;
        }
    }
    assert!(count >= 7, "parsed only {count} types from ravel.h");
    assert_eq!(rust.matches("pub struct ").count(), count, "a struct that ravel.h lacks");
}

/// A constant's value: a string, or an integer from "N", "0xN", "(Nu << M)".
#[derive(Debug, PartialEq)]
enum Value {
    Text(String),
    Int(u64),
}

fn eval(expr: &str) -> Value {
    let expr = expr.trim();
    if let Some(s) = expr.strip_prefix("c\"").or_else(|| expr.strip_prefix('"')) {
        return Value::Text(s.trim_end_matches('"').to_string());
    }
    let expr = expr.trim_start_matches('(').trim_end_matches(')');
    let int = |s: &str| {
        let s = s.trim().trim_end_matches('u');
        match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => s.parse(),
        }
        .unwrap_or_else(|_| panic!("cannot evaluate {s:?}"))
    };
    match expr.split_once("<<") {
        Some((a, b)) => Value::Int(int(a) << int(b)),
        None => Value::Int(int(expr)),
    }
}

#[test]
fn every_constant_of_the_header_has_its_value() {
    let header = strip_comments(&header_text());
    let rust = strip_comments(&rust_text());
    let mut c_consts = BTreeMap::new();
    for line in header.lines() {
        let Some(def) = line.trim().strip_prefix("#define ") else { continue };
        let (name, value) = def.trim().split_once(char::is_whitespace).unwrap_or((def.trim(), ""));
        if name == "RAVEL_H" || name == "RAVEL_API" || value.trim().is_empty() {
            continue;
        }
        c_consts.insert(name.to_string(), eval(value));
    }
    let mut rust_consts = BTreeMap::new();
    for line in rust.lines() {
        let Some(def) = line.trim().strip_prefix("pub const ") else { continue };
        let (name, rest) = def.split_once(':').unwrap();
        let value = rest.split_once('=').unwrap().1.trim().trim_end_matches(';');
        rust_consts.insert(name.trim().to_string(), eval(value));
    }
    assert!(c_consts.len() >= 18, "parsed only {} constants from ravel.h", c_consts.len());
    assert_eq!(rust_consts, c_consts);
}

#[test]
fn the_linked_library_matches_the_header_version() {
    // SAFETY: both functions take nothing and return static data.
    let (number, text) = unsafe {
        (ravel_sys::ravel_libversion_number(), std::ffi::CStr::from_ptr(ravel_sys::ravel_libversion()))
    };
    assert_eq!(number, ravel_sys::RAVEL_VERSION_NUMBER);
    assert_eq!(text, ravel_sys::RAVEL_VERSION);
}
