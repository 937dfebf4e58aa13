"""`ContactView`: the contacts of a Data, read by field name like MuJoCo's `d.contact`."""

import numpy as np

_FIELDS = ("dist", "pos", "frame", "geom", "dim", "friction", "solref", "solreffriction",
           "solimp", "includemargin", "gap", "exclude")


class ContactView:
    """The first d.ncon rows of the contact_* arrays of a Data, by MuJoCo's field names.

    Attributes (n = number of contacts; arrays are views into the Data, so they change
    with the next collision call):
        dist            (n,)       signed distance, negative in penetration
        pos             (n, 3)     contact point, midway between the surfaces
        frame           (n, 9)     rows normal, tangent, tangent (each 3)
        normal          (n, 3)     first row of frame, from geom[0] to geom[1]
        geom            (n, 2)     geom ids; geom1, geom2 are its columns
        dim             (n,)       condim: 1, 3, 4 or 6
        friction        (n, 5)     tangent1, tangent2, spin, roll1, roll2
        solref          (n, 2)     normal-direction solref
        solreffriction  (n, 2)     frictional solref (zeros: use solref)
        solimp          (n, 5)     solimp
        includemargin   (n,)       the contact is active while dist < includemargin
        gap             (n,)       detection reaches includemargin + gap
        exclude         (n,)       1 for an inactive contact (in the gap), else 0

    `len(view)` is the number of contacts; `view[i]` is a dict of contact i's fields.
    """

    __slots__ = ("_d",)

    def __init__(self, d):
        """View the contacts of Data d."""
        self._d = d

    def __len__(self):
        """Number of contacts."""
        return int(self._d.ncon[0])

    def __getattr__(self, name):
        """Field `name` of all contacts (a view of the first ncon rows)."""
        if name in _FIELDS:
            return getattr(self._d, "contact_" + name)[: int(self._d.ncon[0])]
        raise AttributeError(f"contact has no field {name!r}; fields: {', '.join(_FIELDS)}, "
                             "normal, geom1, geom2")

    @property
    def normal(self):
        """(n, 3) contact normals (first frame row), pointing from geom1 to geom2."""
        return self.frame[:, :3]

    @property
    def geom1(self):
        """(n,) id of the first geom of each contact."""
        return self.geom[:, 0]

    @property
    def geom2(self):
        """(n,) id of the second geom of each contact."""
        return self.geom[:, 1]

    def __getitem__(self, i):
        """Contact i as a dict of its fields (copies)."""
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"contact index {i} out of range for {n} contacts")
        i %= n
        out = {k: np.array(getattr(self._d, "contact_" + k)[i]) for k in _FIELDS}
        for k in ("dist", "includemargin", "gap"):
            out[k] = float(out[k])
        for k in ("dim", "exclude"):
            out[k] = int(out[k])
        return out

    def __iter__(self):
        """Iterate over the contacts as dicts."""
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        """A short listing of the contacts."""
        n = len(self)
        if n == 0:
            return "ContactView(0 contacts)"
        rows = [f"  {i}: geoms {tuple(int(g) for g in self.geom[i])}, dist {self.dist[i]:+.3g}, "
                f"pos {np.round(self.pos[i], 4).tolist()}" for i in range(min(n, 8))]
        more = [f"  … {n - 8} more"] if n > 8 else []
        return f"ContactView({n} contacts\n" + "\n".join(rows + more) + ")"
