// source: rust-ndarray/ndarray-linalg ndarray-linalg/src/{operator.rs,diagonal.rs,generate.rs} @b9b57f07 (MIT OR Apache-2.0)
{
    use ndarray::*;
    // changed: cauchy's Scalar trait replaced by a small local marker trait over ndarray's
    // LinalgScalar (with MulAssign, which Diagonal's apply_mut uses); the crate's Result is
    // ndarray's ShapeError result
    pub trait Scalar: LinalgScalar + std::ops::MulAssign {}
    impl Scalar for f64 {}
    impl Scalar for f32 {}
    type Result<T> = std::result::Result<T, ShapeError>;

    pub fn hstack<A, S>(xs: &[ArrayBase<S, Ix1>]) -> Result<Array<A, Ix2>>
    where
        A: Scalar,
        S: Data<Elem = A>,
    {
        let views: Vec<_> = xs.iter().map(|x| x.view()).collect();
        stack(Axis(1), &views).map_err(Into::into)
    }

    pub trait LinearOperator {
        type Elem: Scalar;

        fn apply<S>(&self, a: &ArrayBase<S, Ix1>) -> Array1<S::Elem>
        where
            S: Data<Elem = Self::Elem>,
        {
            let mut a = a.to_owned();
            self.apply_mut(&mut a);
            a
        }

        fn apply_mut<S>(&self, a: &mut ArrayBase<S, Ix1>)
        where
            S: DataMut<Elem = Self::Elem>,
        {
            let b = self.apply(a);
            azip!((a in a, &b in &b) *a = b);
        }

        fn apply_into<S>(&self, mut a: ArrayBase<S, Ix1>) -> ArrayBase<S, Ix1>
        where
            S: DataOwned<Elem = Self::Elem> + DataMut,
        {
            self.apply_mut(&mut a);
            a
        }

        fn apply2<S>(&self, a: &ArrayBase<S, Ix2>) -> Array2<S::Elem>
        where
            S: Data<Elem = Self::Elem>,
        {
            let cols: Vec<_> = a.axis_iter(Axis(1)).map(|col| self.apply(&col)).collect();
            hstack(&cols).unwrap()
        }

        fn apply2_mut<S>(&self, a: &mut ArrayBase<S, Ix2>)
        where
            S: DataMut<Elem = Self::Elem>,
        {
            for mut col in a.axis_iter_mut(Axis(1)) {
                self.apply_mut(&mut col)
            }
        }

        fn apply2_into<S>(&self, mut a: ArrayBase<S, Ix2>) -> ArrayBase<S, Ix2>
        where
            S: DataOwned<Elem = Self::Elem> + DataMut,
        {
            self.apply2_mut(&mut a);
            a
        }
    }

    impl<A, Sa> LinearOperator for ArrayBase<Sa, Ix2>
    where
        A: Scalar,
        Sa: Data<Elem = A>,
    {
        type Elem = A;

        fn apply<S>(&self, a: &ArrayBase<S, Ix1>) -> Array1<A>
        where
            S: Data<Elem = A>,
        {
            self.dot(a)
        }
    }

    pub struct Diagonal<S: Data> {
        diag: ArrayBase<S, Ix1>,
    }

    pub trait IntoDiagonal<S: Data> {
        fn into_diagonal(self) -> Diagonal<S>;
    }

    pub trait AsDiagonal<A> {
        fn as_diagonal(&self) -> Diagonal<ViewRepr<&A>>;
    }

    impl<S: Data> IntoDiagonal<S> for ArrayBase<S, Ix1> {
        fn into_diagonal(self) -> Diagonal<S> {
            Diagonal { diag: self }
        }
    }

    impl<A, S: Data<Elem = A>> AsDiagonal<A> for ArrayBase<S, Ix1> {
        fn as_diagonal(&self) -> Diagonal<ViewRepr<&A>> {
            Diagonal { diag: self.view() }
        }
    }

    impl<A, Sa> LinearOperator for Diagonal<Sa>
    where
        A: Scalar,
        Sa: Data<Elem = A>,
    {
        type Elem = A;

        fn apply_mut<S>(&self, a: &mut ArrayBase<S, Ix1>)
        where
            S: DataMut<Elem = A>,
        {
            for (val, d) in a.iter_mut().zip(self.diag.iter()) {
                *val *= *d;
            }
        }
    }

    let m = arr2(&[[2.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 3.0]]);
    let v = arr1(&[1.0, -1.0, 0.5]);
    println!("matrix apply = {}", m.apply(&v));
    let mut w = v.clone();
    m.apply_mut(&mut w);
    println!("matrix apply_mut = {}", w);
    let b = arr2(&[[1.0, 0.0], [2.0, 1.0], [0.0, -1.0]]);
    println!("matrix apply2 =\n{}", m.apply2(&b));
    let d = arr1(&[10.0, 0.5, -1.0]);
    println!("diagonal apply = {}", d.as_diagonal().apply(&v));
    println!("diagonal apply2_into =\n{}", d.view().into_diagonal().apply2_into(b.clone()));
    let mut c = b.t().to_owned();
    arr1(&[3.0f64, -2.0]).as_diagonal().apply2_mut(&mut c.view_mut().reversed_axes());
    println!("diagonal apply2_mut on a transposed view =\n{}", c);
    println!("f32 apply_into = {}", arr1(&[2.0f32, 4.0]).as_diagonal().apply_into(arr1(&[0.5f32, 0.25])));
}
