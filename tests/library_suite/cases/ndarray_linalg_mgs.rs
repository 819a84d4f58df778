// source: rust-ndarray/ndarray-linalg ndarray-linalg/src/{norm.rs,inner.rs,krylov/mod.rs,krylov/mgs.rs,generate.rs} @b9b57f07 (MIT OR Apache-2.0)
{
    use ndarray::*;
    // changed: cauchy's Scalar trait replaced by a small local one implemented for f64 (with the
    // abs, square, conj, re and from_real the bodies call), and the Lapack bounds dropped; the
    // crate's Result is ndarray's ShapeError result; the Householder and Arnoldi parts dropped
    pub trait Scalar: LinalgScalar + std::fmt::Debug + std::ops::SubAssign + std::ops::DivAssign {
        type Real: NdFloat + std::iter::Sum + RealOps;
        fn abs(self) -> Self::Real;
        fn square(self) -> Self::Real;
        fn conj(self) -> Self;
        fn re(self) -> Self::Real;
        fn from_real(re: Self::Real) -> Self;
    }
    pub trait RealOps {
        fn sqrt(self) -> Self;
        fn zero() -> Self;
    }
    impl RealOps for f64 {
        fn sqrt(self) -> f64 { f64::sqrt(self) }
        fn zero() -> f64 { 0.0 }
    }
    impl Scalar for f64 {
        type Real = f64;
        fn abs(self) -> f64 { f64::abs(self) }
        fn square(self) -> f64 { self * self }
        fn conj(self) -> f64 { self }
        fn re(self) -> f64 { self }
        fn from_real(re: f64) -> f64 { re }
    }
    type Result<T> = std::result::Result<T, ShapeError>;

    pub trait Norm {
        type Output;
        fn norm(&self) -> Self::Output {
            self.norm_l2()
        }
        fn norm_l1(&self) -> Self::Output;
        fn norm_l2(&self) -> Self::Output;
        fn norm_max(&self) -> Self::Output;
    }

    impl<A, S, D> Norm for ArrayBase<S, D>
    where
        A: Scalar,
        S: Data<Elem = A>,
        D: Dimension,
    {
        type Output = A::Real;
        fn norm_l1(&self) -> Self::Output {
            self.iter().map(|x| x.abs()).sum()
        }
        fn norm_l2(&self) -> Self::Output {
            self.iter().map(|x| x.square()).sum::<A::Real>().sqrt()
        }
        fn norm_max(&self) -> Self::Output {
            self.iter().fold(A::Real::zero(), |f, &val| {
                let v = val.abs();
                if f > v {
                    f
                } else {
                    v
                }
            })
        }
    }

    pub enum NormalizeAxis {
        Row = 0,
        Column = 1,
    }

    pub fn normalize<A, S>(
        mut m: ArrayBase<S, Ix2>,
        axis: NormalizeAxis,
    ) -> (ArrayBase<S, Ix2>, Vec<A::Real>)
    where
        A: Scalar,
        S: DataMut<Elem = A>,
    {
        let mut ms = Vec::new();
        for mut v in m.axis_iter_mut(Axis(axis as usize)) {
            let n = v.norm();
            ms.push(n);
            v.map_inplace(|x| *x /= A::from_real(n))
        }
        (m, ms)
    }

    pub trait InnerProduct {
        type Elem: Scalar;

        fn inner<S>(&self, rhs: &ArrayBase<S, Ix1>) -> Self::Elem
        where
            S: Data<Elem = Self::Elem>;
    }

    impl<A, S> InnerProduct for ArrayBase<S, Ix1>
    where
        A: Scalar,
        S: Data<Elem = A>,
    {
        type Elem = A;
        fn inner<St: Data<Elem = A>>(&self, rhs: &ArrayBase<St, Ix1>) -> A {
            assert_eq!(self.len(), rhs.len());
            Zip::from(self)
                .and(rhs)
                .fold_while(A::zero(), |acc, s, r| {
                    FoldWhile::Continue(acc + s.conj() * *r)
                })
                .into_inner()
        }
    }

    pub type Q<A> = Array2<A>;

    pub type R<A> = Array2<A>;

    pub type H<A> = Array2<A>;

    pub type Coefficients<A> = Array1<A>;

    pub trait Orthogonalizer {
        type Elem: Scalar;

        fn dim(&self) -> usize;

        fn len(&self) -> usize;

        fn is_full(&self) -> bool {
            self.len() == self.dim()
        }

        fn is_empty(&self) -> bool {
            self.len() == 0
        }

        fn tolerance(&self) -> <Self::Elem as Scalar>::Real;

        fn decompose<S>(&self, a: &mut ArrayBase<S, Ix1>) -> Coefficients<Self::Elem>
        where
            S: DataMut<Elem = Self::Elem>;

        fn coeff<S>(&self, a: ArrayBase<S, Ix1>) -> Coefficients<Self::Elem>
        where
            S: Data<Elem = Self::Elem>;

        fn append<S>(&mut self, a: ArrayBase<S, Ix1>) -> AppendResult<Self::Elem>
        where
            S: Data<Elem = Self::Elem>;

        fn div_append<S>(&mut self, a: &mut ArrayBase<S, Ix1>) -> AppendResult<Self::Elem>
        where
            S: DataMut<Elem = Self::Elem>;

        fn get_q(&self) -> Q<Self::Elem>;
    }

    pub enum AppendResult<A> {
        Added(Coefficients<A>),
        Dependent(Coefficients<A>),
    }

    impl<A: Scalar> AppendResult<A> {
        pub fn into_coeff(self) -> Coefficients<A> {
            match self {
                AppendResult::Added(c) => c,
                AppendResult::Dependent(c) => c,
            }
        }

        pub fn is_dependent(&self) -> bool {
            match self {
                AppendResult::Added(_) => false,
                AppendResult::Dependent(_) => true,
            }
        }

        pub fn coeff(&self) -> &Coefficients<A> {
            match self {
                AppendResult::Added(c) => c,
                AppendResult::Dependent(c) => c,
            }
        }

        pub fn residual_norm(&self) -> A::Real {
            let c = self.coeff();
            c[c.len() - 1].abs()
        }
    }

    #[derive(Clone, Copy, Debug, Eq, PartialEq)]
    pub enum Strategy {
        Terminate,

        Skip,

        Full,
    }

    pub fn qr<A, S>(
        iter: impl Iterator<Item = ArrayBase<S, Ix1>>,
        mut ortho: impl Orthogonalizer<Elem = A>,
        strategy: Strategy,
    ) -> (Q<A>, R<A>)
    where
        A: Scalar,
        S: Data<Elem = A>,
    {
        assert_eq!(ortho.len(), 0);

        let mut coefs = Vec::new();
        for a in iter {
            match ortho.append(a.into_owned()) {
                AppendResult::Added(coef) => coefs.push(coef),
                AppendResult::Dependent(coef) => match strategy {
                    Strategy::Terminate => break,
                    Strategy::Skip => continue,
                    Strategy::Full => coefs.push(coef),
                },
            }
        }
        let n = ortho.len();
        let m = coefs.len();
        let mut r = Array2::zeros((n, m).f());
        for j in 0..m {
            for i in 0..n {
                if i < coefs[j].len() {
                    r[(i, j)] = coefs[j][i];
                }
            }
        }
        (ortho.get_q(), r)
    }

    #[derive(Debug, Clone)]
    pub struct MGS<A: Scalar> {
        dim: usize,

        q: Vec<Array1<A>>,

        tol: A::Real,
    }

    impl<A: Scalar> MGS<A> {
        pub fn new(dim: usize, tol: A::Real) -> Self {
            Self {
                dim,
                q: Vec::new(),
                tol,
            }
        }
    }

    impl<A: Scalar> Orthogonalizer for MGS<A> {
        type Elem = A;

        fn dim(&self) -> usize {
            self.dim
        }

        fn len(&self) -> usize {
            self.q.len()
        }

        fn tolerance(&self) -> A::Real {
            self.tol
        }

        fn decompose<S>(&self, a: &mut ArrayBase<S, Ix1>) -> Array1<A>
        where
            S: DataMut<Elem = A>,
        {
            assert_eq!(a.len(), self.dim());
            let mut coef = Array1::zeros(self.len() + 1);
            for i in 0..self.len() {
                let q = &self.q[i];
                let c = q.inner(a);
                azip!((a in &mut *a, &q in q) *a -= c * q);
                coef[i] = c;
            }
            let nrm = a.norm_l2();
            coef[self.len()] = A::from_real(nrm);
            coef
        }

        fn coeff<S>(&self, a: ArrayBase<S, Ix1>) -> Array1<A>
        where
                    S: Data<Elem = A>,
        {
            let mut a = a.into_owned();
            self.decompose(&mut a)
        }

        fn append<S>(&mut self, a: ArrayBase<S, Ix1>) -> AppendResult<A>
        where
                    S: Data<Elem = A>,
        {
            let mut a = a.into_owned();
            self.div_append(&mut a)
        }

        fn div_append<S>(&mut self, a: &mut ArrayBase<S, Ix1>) -> AppendResult<A>
        where
                    S: DataMut<Elem = A>,
        {
            let coef = self.decompose(a);
            let nrm = coef[coef.len() - 1].re();
            if nrm < self.tol {
                // Linearly dependent
                return AppendResult::Dependent(coef);
            }
            azip!((a in &mut *a) *a /= A::from_real(nrm));
            self.q.push(a.to_owned());
            AppendResult::Added(coef)
        }

        fn get_q(&self) -> Q<A> {
            hstack(&self.q).unwrap()
        }
    }

    pub fn mgs<A, S>(
        iter: impl Iterator<Item = ArrayBase<S, Ix1>>,
        dim: usize,
        rtol: A::Real,
        strategy: Strategy,
    ) -> (Q<A>, R<A>)
    where
        A: Scalar,
        S: Data<Elem = A>,
    {
        let mgs = MGS::new(dim, rtol);
        qr(iter, mgs, strategy)
    }

    pub fn hstack<A, S>(xs: &[ArrayBase<S, Ix1>]) -> Result<Array<A, Ix2>>
    where
        A: Scalar,
        S: Data<Elem = A>,
    {
        let views: Vec<_> = xs.iter().map(|x| x.view()).collect();
        stack(Axis(1), &views).map_err(Into::into)
    }

    // orthogonalise the columns of a 4 x 4 matrix whose third column is dependent
    let a = array![
        [1.0, 1.0, 2.0, 0.0],
        [1.0, 0.0, 1.0, 1.0],
        [0.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 2.0, 2.0]
    ];
    for strategy in [Strategy::Terminate, Strategy::Skip, Strategy::Full] {
        let (q, r) = mgs(a.axis_iter(Axis(1)), 4, 1e-9, strategy);
        println!("{:?}: Q {:?}, R {:?}", strategy, q.shape(), r.shape());
        println!("R =\n{:.4}", r);
        let qtq = q.t().dot(&q);
        println!("Q^T Q is the identity: {}", (&qtq - &Array2::<f64>::eye(qtq.nrows())).iter().all(|x| x.abs() < 1e-12));
    }
    let mut ortho = MGS::new(3, 1e-9);
    let first = ortho.append(array![3.0, 0.0, 4.0]);
    println!("residual of the first vector = {:.4}", first.residual_norm());
    let second = ortho.append(array![6.0, 0.0, 8.0]);
    println!("dependent: {}, coefficients {:.4}", second.is_dependent(), second.coeff());
    println!("norms: l1 {:.4}, l2 {:.4}, max {:.4}", a.norm_l1(), a.norm_l2(), a.row(3).norm_max());
    let (m, norms) = normalize(a.clone(), NormalizeAxis::Column);
    println!("column norms = {:?}", norms.iter().map(|n| format!("{:.4}", n)).collect::<Vec<_>>());
    println!("normalized =\n{:.4}", m);
    println!("inner = {:.4}", a.row(0).inner(&a.column(3)));
}
