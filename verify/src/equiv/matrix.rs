//! Arithmetic on matrices: `\begin{pmatrix}1&2\\3&4\end{pmatrix} + \begin{pmatrix}..\end{pmatrix}`,
//! a scalar times a matrix, a matrix divided by a scalar, products of matrices and small positive
//! integer powers of a square matrix are written out entry by entry (each entry an expression),
//! so that the result compares with a matrix written out. Shapes must fit (a sum of matrices of
//! different shapes, or a scalar added to a matrix, is not a matrix: not equal to one).
//!
//! The entries are built as expressions, not evaluated, so the cost is the size of the trees
//! built; it is charged to the budget and capped by [`MAX_NODES`].

use super::context::Cx;
use super::scalar::visit;
use crate::ast::{Expr, Number};
use crate::limits::LimitKind;
use num_traits::ToPrimitive;

/// Most expression nodes the entries of one result may hold.
const MAX_NODES: usize = 20_000;
/// Largest number of rows or columns.
const MAX_DIM: usize = 8;
/// Largest power of a matrix written out.
const MAX_POWER: u32 = 8;
/// Deepest arithmetic around a matrix that is searched.
const MAX_DEPTH: usize = 32;

type Rows = Vec<Vec<Expr>>;

/// Whether `e` is arithmetic (sum, product, negation, quotient, power) with a matrix among its
/// operands: what [`evaluate`] rewrites.
pub(crate) fn is_matrix_arithmetic(e: &Expr) -> bool {
    fn go(e: &Expr, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match e {
            Expr::Matrix(_) => depth > 0,
            Expr::Add(v) | Expr::Mul(v) => v.iter().any(|x| go(x, depth + 1)),
            Expr::Neg(a) | Expr::Div(a, _) | Expr::Pow(a, _) => go(a, depth + 1),
            _ => false,
        }
    }
    go(e, 0)
}

/// The matrix that matrix arithmetic `e` denotes; `None` when it is not one (shapes that do not
/// fit, a scalar added to a matrix, a product too large to write out).
pub(crate) fn evaluate(e: &Expr, cx: &mut Cx) -> Result<Option<Expr>, LimitKind> {
    let mut nodes = 0usize;
    Ok(value(e, cx, &mut nodes, 0)?.map(Expr::Matrix))
}

fn size(e: &Expr) -> usize {
    let mut n = 0;
    visit(e, &mut |_| n += 1);
    n
}

/// Count `k` new nodes against the cap and the budget.
fn spend(nodes: &mut usize, k: usize, cx: &mut Cx) -> Result<bool, LimitKind> {
    *nodes += k;
    cx.budget.charge(1 + k as u64 / 8)?;
    Ok(*nodes <= MAX_NODES)
}

fn value(e: &Expr, cx: &mut Cx, nodes: &mut usize, depth: usize) -> Result<Option<Rows>, LimitKind> {
    if depth > MAX_DEPTH {
        return Ok(None);
    }
    match e {
        Expr::Matrix(rows) => {
            let cols = rows.first().map_or(0, Vec::len);
            if rows.is_empty()
                || rows.len() > MAX_DIM
                || cols == 0
                || cols > MAX_DIM
                || rows.iter().any(|r| r.len() != cols)
            {
                return Ok(None);
            }
            Ok(Some(rows.clone()))
        }
        Expr::Neg(a) => {
            let Some(m) = value(a, cx, nodes, depth + 1)? else { return Ok(None) };
            map(m, cx, nodes, |x| Expr::Neg(Box::new(x)))
        }
        Expr::Add(terms) => {
            let mut acc: Option<Rows> = None;
            for t in terms {
                let Some(m) = value(t, cx, nodes, depth + 1)? else { return Ok(None) };
                acc = Some(match acc {
                    None => m,
                    Some(a) => {
                        if a.len() != m.len() || a[0].len() != m[0].len() {
                            return Ok(None);
                        }
                        let mut out = Vec::with_capacity(a.len());
                        for (ra, rm) in a.into_iter().zip(m) {
                            let mut row = Vec::with_capacity(ra.len());
                            for (x, y) in ra.into_iter().zip(rm) {
                                let entry = match x {
                                    Expr::Add(mut v) => {
                                        v.push(y);
                                        Expr::Add(v)
                                    }
                                    x => Expr::Add(vec![x, y]),
                                };
                                row.push(entry);
                            }
                            out.push(row);
                        }
                        if !spend(nodes, out.len() * out[0].len(), cx)? {
                            return Ok(None);
                        }
                        out
                    }
                });
            }
            Ok(acc)
        }
        Expr::Mul(factors) => {
            // Scalars commute with matrices: their product times the product of the matrices in
            // the written order.
            let mut scalars = Vec::new();
            let mut acc: Option<Rows> = None;
            for f in factors {
                if is_matrix_arithmetic(f) || matches!(f, Expr::Matrix(_)) {
                    let Some(m) = value(f, cx, nodes, depth + 1)? else { return Ok(None) };
                    acc = Some(match acc {
                        None => m,
                        Some(a) => match product(&a, &m, cx, nodes)? {
                            Some(p) => p,
                            None => return Ok(None),
                        },
                    });
                } else if contains_matrix(f) {
                    return Ok(None);
                } else {
                    scalars.push(f.clone());
                }
            }
            let Some(m) = acc else { return Ok(None) };
            if scalars.is_empty() {
                return Ok(Some(m));
            }
            map(m, cx, nodes, |x| {
                let mut v = scalars.clone();
                v.push(x);
                Expr::Mul(v)
            })
        }
        Expr::Div(a, b) if !contains_matrix(b) => {
            let Some(m) = value(a, cx, nodes, depth + 1)? else { return Ok(None) };
            map(m, cx, nodes, |x| Expr::Div(Box::new(x), b.clone()))
        }
        Expr::Pow(a, b) => {
            let n = match &**b {
                Expr::Num(Number { value, decimals: None }) if value.is_integer() => value.to_integer().to_u32(),
                _ => None,
            };
            let Some(n) = n.filter(|n| (1..=MAX_POWER).contains(n)) else { return Ok(None) };
            let Some(m) = value(a, cx, nodes, depth + 1)? else { return Ok(None) };
            if m.len() != m[0].len() {
                return Ok(None);
            }
            let mut acc = m.clone();
            for _ in 1..n {
                match product(&acc, &m, cx, nodes)? {
                    Some(p) => acc = p,
                    None => return Ok(None),
                }
            }
            Ok(Some(acc))
        }
        _ => Ok(None),
    }
}

fn contains_matrix(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |x| found |= matches!(x, Expr::Matrix(_)));
    found
}

/// Apply `f` to every entry.
fn map(m: Rows, cx: &mut Cx, nodes: &mut usize, f: impl Fn(Expr) -> Expr) -> Result<Option<Rows>, LimitKind> {
    let count = m.len() * m[0].len();
    if !spend(nodes, count, cx)? {
        return Ok(None);
    }
    Ok(Some(m.into_iter().map(|r| r.into_iter().map(&f).collect()).collect()))
}

/// The matrix product `a b`; `None` when the shapes do not fit or the entries grow too large.
fn product(a: &Rows, b: &Rows, cx: &mut Cx, nodes: &mut usize) -> Result<Option<Rows>, LimitKind> {
    let (n, k, m) = (a.len(), a[0].len(), b[0].len());
    if b.len() != k {
        return Ok(None);
    }
    let sa: Vec<Vec<usize>> = a.iter().map(|r| r.iter().map(size).collect()).collect();
    let sb: Vec<Vec<usize>> = b.iter().map(|r| r.iter().map(size).collect()).collect();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut row = Vec::with_capacity(m);
        for j in 0..m {
            let cost: usize = (0..k).map(|t| sa[i][t] + sb[t][j] + 1).sum::<usize>() + 1;
            if !spend(nodes, cost, cx)? {
                return Ok(None);
            }
            row.push(Expr::Add((0..k).map(|t| Expr::Mul(vec![a[i][t].clone(), b[t][j].clone()])).collect()));
        }
        out.push(row);
    }
    Ok(Some(out))
}
