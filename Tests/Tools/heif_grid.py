"""HEIF and AVIF grids as phones write them, for fixtures and benchmarks: each tile encoded alone by pillow-heif
(its wheel's libheif with x265 and aom), then the grid's boxes written here (ISO/IEC 23008-12): the tiles as hidden
items, a `grid` item as the primary image with its description in `idat`, its `dimg` references to the tiles in
row order, and the grid's transformative properties (`irot`, `imir`, `clap`) in the order given.
"""
import io
import struct

import pillow_heif
from PIL import Image

pillow_heif.register_heif_opener()
pillow_heif.register_avif_opener()

def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind.encode()) + payload


def full_box(kind, version, flags, payload):
    return box(kind, struct.pack(">I", version << 24 | flags) + payload)


def children(data, start, end):
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        yield kind.decode(), start, start + size
        start += size


def coded_image(tile, avif, quality=95):
    """One picture encoded alone by pillow-heif: its decoder configuration box and its coded data."""
    out = io.BytesIO()
    tile.save(out, format="AVIF" if avif else "HEIF", quality=quality)
    data = out.getvalue()
    meta = next((s, e) for k, s, e in children(data, 0, len(data)) if k == "meta")
    parts = {k: (s, e) for k, s, e in children(data, meta[0] + 12, meta[1])}
    iprp = parts["iprp"]
    ipco = next((s, e) for k, s, e in children(data, iprp[0] + 8, iprp[1]) if k == "ipco")
    config = next(data[s:e] for k, s, e in children(data, ipco[0] + 8, ipco[1]) if k in ("hvcC", "av1C"))
    iloc = data[parts["iloc"][0]:parts["iloc"][1]]
    version = iloc[8]
    sizes = struct.unpack(">H", iloc[12:14])[0]
    offset_size, length_size, base_size = sizes >> 12, sizes >> 8 & 15, sizes >> 4 & 15
    assert version in (0, 1) and offset_size == length_size == 4 and base_size in (0, 4), "an iloc not read here"
    position = 16 + 2 + (2 if version == 1 else 0) + 2
    base = struct.unpack(">I", iloc[position:position + 4])[0] if base_size else 0
    position += base_size + 2
    offset, length = struct.unpack(">II", iloc[position:position + 8])
    offset += base
    return config, data[offset:offset + length]


def grid_file(tiles, columns, canvas, transforms=(), avif=False, thumbnail=None, quality=95):
    """A HEIF (or AVIF) whose primary image is a grid of `tiles` (hidden items, as phones write them), with the
    grid's transformative properties in the order given (("irot", n), ("imir", axis), ("clap", 8 numbers))."""
    coded = [coded_image(tile, avif, quality) for tile in tiles]
    tile_width, tile_height = tiles[0].size
    rows = len(tiles) // columns
    grid_id = len(tiles) + 1
    items = [(index + 1, "av01" if avif else "hvc1", True) for index in range(len(tiles))]
    items.append((grid_id, "grid", False))
    # Tiles encoded alike share one decoder configuration, as an iPhone's do.
    properties = []
    config_index = []
    for config, _ in coded:
        if config not in properties:
            properties.append(config)
        config_index.append(properties.index(config) + 1)
    properties.append(full_box("ispe", 0, 0, struct.pack(">II", tile_width, tile_height)))
    tile_ispe = len(properties)
    properties.append(full_box("ispe", 0, 0, struct.pack(">II", *canvas)))
    for kind, value in transforms:
        if kind == "clap":
            properties.append(box("clap", struct.pack(">8I", *[v & 0xFFFFFFFF for v in value])))
        else:
            properties.append(box(kind, bytes([value])))
    associations = {index + 1: [config_index[index], tile_ispe] for index in range(len(tiles))}
    associations[grid_id] = [tile_ispe + 1] + list(range(tile_ispe + 2, tile_ispe + 2 + len(transforms)))
    payloads = [data for _, data in coded]
    references = [(grid_id, "dimg", [index + 1 for index in range(len(tiles))])]
    if thumbnail is not None:
        config, data = coded_image(thumbnail, avif)
        thumb_id = grid_id + 1
        items.append((thumb_id, "av01" if avif else "hvc1", False))
        properties.append(config)
        properties.append(full_box("ispe", 0, 0, struct.pack(">II", *thumbnail.size)))
        associations[thumb_id] = [len(properties) - 1, len(properties)]
        payloads.append(data)
        references.append((thumb_id, "thmb", [grid_id]))
    descriptor = struct.pack(">BBBBHH", 0, 0, rows - 1, columns - 1, *canvas)

    def meta(mdat_start):
        infe = b"".join(
            full_box("infe", 2, 1 if hidden else 0, struct.pack(">HH4s", item, 0, kind.encode()) + b"\0")
            for item, kind, hidden in items)
        iref = full_box("iref", 0, 0, b"".join(
            box(kind, struct.pack(">HH", source, len(targets)) + b"".join(struct.pack(">H", t) for t in targets))
            for source, kind, targets in references))
        # Indices above 127 need the 16-bit form (flags 1).
        wide = len(properties) > 127
        ipma_entries = b"".join(
            struct.pack(">HB", item, len(indices))
            + b"".join(struct.pack(">H", 0x8000 | index) if wide else bytes([0x80 | index]) for index in indices)
            for item, indices in sorted(associations.items()))
        iprp = box("iprp", box("ipco", b"".join(properties))
                   + full_box("ipma", 0, 1 if wide else 0, struct.pack(">I", len(associations)) + ipma_entries))
        locations = []
        offset = mdat_start
        data_ids = [item for item, kind, _ in items if kind != "grid"]
        for item, payload in zip(data_ids, payloads):
            locations.append(struct.pack(">HHHHII", item, 0, 0, 1, offset, len(payload)))
            offset += len(payload)
        locations.append(struct.pack(">HHHHII", grid_id, 1, 0, 1, 0, len(descriptor)))
        iloc = full_box("iloc", 1, 0, struct.pack(">HH", 0x4400, len(locations)) + b"".join(locations))
        return full_box("meta", 0, 0, b"".join([
            full_box("hdlr", 0, 0, b"\0" * 4 + b"pict" + b"\0" * 13),
            full_box("pitm", 0, 0, struct.pack(">H", grid_id)),
            full_box("iinf", 0, 0, struct.pack(">H", len(items)) + infe),
            iref, iprp, iloc, box("idat", descriptor)]))

    brand = b"avif" if avif else b"heic"
    ftyp = box("ftyp", brand + b"\0\0\0\0" + b"mif1" + brand)
    size = len(meta(0))
    return ftyp + meta(len(ftyp) + size + 8) + box("mdat", b"".join(payloads))


def grid_from_picture(picture, tile=512, quality=90, avif=False, transforms=()):
    """`picture` cut into `tile`-sized tiles (the last row and column padded by repeating the edge, as encoders
    do), each encoded alone, on a canvas of the picture's size: an iPhone's HEIC, from any photo."""
    width, height = picture.size
    columns, rows = -(-width // tile), -(-height // tile)
    padded = Image.new("RGB", (columns * tile, rows * tile))
    padded.paste(picture, (0, 0))
    if columns * tile > width:
        padded.paste(picture.crop((width - 1, 0, width, height)).resize((columns * tile - width, height)), (width, 0))
    if rows * tile > height:
        edge = padded.crop((0, height - 1, columns * tile, height))
        padded.paste(edge.resize((columns * tile, rows * tile - height)), (0, height))
    tiles = [padded.crop((c * tile, r * tile, (c + 1) * tile, (r + 1) * tile)) for r in range(rows) for c in range(columns)]
    return grid_file(tiles, columns, (width, height), transforms=transforms, avif=avif, quality=quality)


def still_file(picture, transforms=(), avif=True, quality=95):
    """One coded picture as the primary item, with the transformative properties given (pillow-heif writes
    none): how a phone's AVIF or a rotated camera HEIF is stored."""
    config, data = coded_image(picture, avif, quality)
    kind = "av01" if avif else "hvc1"
    properties = [config, full_box("ispe", 0, 0, struct.pack(">II", *picture.size))]
    for name, value in transforms:
        if name == "clap":
            properties.append(box("clap", struct.pack(">8I", *[v & 0xFFFFFFFF for v in value])))
        else:
            properties.append(box(name, bytes([value])))
    associations = bytes(0x80 | index for index in range(1, len(properties) + 1))

    def meta(data_start):
        return full_box("meta", 0, 0, b"".join([
            full_box("hdlr", 0, 0, b"\0" * 4 + b"pict" + b"\0" * 13),
            full_box("pitm", 0, 0, struct.pack(">H", 1)),
            full_box("iinf", 0, 0, struct.pack(">H", 1) + full_box("infe", 2, 0, struct.pack(">HH4s", 1, 0, kind.encode()) + b"\0")),
            box("iprp", box("ipco", b"".join(properties))
                + full_box("ipma", 0, 0, struct.pack(">IHB", 1, 1, len(properties)) + associations)),
            full_box("iloc", 1, 0, struct.pack(">HHHHHHII", 0x4400, 1, 1, 0, 0, 1, data_start, len(data)))]))

    brand = b"avif" if avif else b"heic"
    ftyp = box("ftyp", brand + b"\0\0\0\0" + b"mif1" + brand)
    size = len(meta(0))
    return ftyp + meta(len(ftyp) + size + 8) + box("mdat", data)
