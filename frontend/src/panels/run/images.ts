/**
 * Images in runs: a picked or dropped file becomes KServe's v1 binary convention
 * (`{"instances": [{"image": {"b64": …}}]}`), image values inside bodies are found for thumbnails, and
 * a detector's boxes (`predictions[i].faces[j].box` = [x, y, width, height]) are read for drawing on
 * the input image. Pure functions: the components only draw what these return.
 */

/**
 * The largest image file the Run panel takes: base64 makes it 4/3 larger, and the whole request must
 * stay under the studio's request cap (STUDIO_MAX_REQUEST_BYTES, 2 MiB by default).
 */
export const MAX_IMAGE_FILE_BYTES = 1_500_000;

/** How a base64 text starts for each image format browsers show. */
const MAGIC: [string, string][] = [
  ["/9j/", "image/jpeg"],
  ["iVBORw0KGgo", "image/png"],
  ["R0lGOD", "image/gif"],
  ["UklGR", "image/webp"],
  ["Qk", "image/bmp"],
];

/** A `data:` URL for an image value (`{"b64": …}`, a base64 image text or a data: URL), else null. */
export function imageSource(value: unknown): string | null {
  const text = value && typeof value === "object" && !Array.isArray(value) ? (value as { b64?: unknown }).b64 : value;
  if (typeof text !== "string" || text.length < 16) return null;
  if (/^data:image\/[a-z+.-]+;base64,/i.test(text)) return text;
  for (const [prefix, type] of MAGIC) {
    // BMP's "Qk" is short: take it only inside {"b64": …}, where an image is meant.
    if (text.startsWith(prefix) && (prefix !== "Qk" || text !== value)) return `data:${type};base64,${text}`;
  }
  return null;
}

export interface FoundImage {
  /** Where it is, as a GJSON-like path (`predictions.0.faces.1.crop`). */
  path: string;
  src: string;
}

/** The image values inside a JSON value, in document order, at most `limit` (bounded walk). */
export function findImages(value: unknown, limit = 12): FoundImage[] {
  const found: FoundImage[] = [];
  const stack: [unknown, string][] = [[value, ""]];
  let visited = 0;
  while (stack.length > 0 && found.length < limit && visited < 20_000) {
    const [node, path] = stack.pop()!;
    visited += 1;
    const src = imageSource(node);
    if (src) {
      found.push({ path: path || "(body)", src });
      continue;
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], path ? `${path}.${i}` : String(i)]);
    } else if (node && typeof node === "object") {
      const entries = Object.entries(node as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], path ? `${path}.${entries[i][0]}` : entries[i][0]]);
    }
  }
  return found;
}

function parsed(body: unknown): unknown {
  if (typeof body !== "string") return body;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

/** The images a v1 request sends: `instances[i].image` (or `instances[i]` itself), in order. */
export function requestImages(body: unknown): string[] {
  const value = parsed(body);
  const instances = value && typeof value === "object" ? (value as { instances?: unknown }).instances : null;
  if (!Array.isArray(instances)) return [];
  return instances.map((item) => imageSource(item && typeof item === "object" && "image" in item ? (item as { image: unknown }).image : item)).filter((x): x is string => x !== null);
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
  /** A name to show beside it (a match), when the answer has one. */
  label: string | null;
}

const isBox = (b: unknown): b is [number, number, number, number] => Array.isArray(b) && b.length === 4 && b.every((n) => typeof n === "number" && Number.isFinite(n));

/**
 * The boxes an answer gives per instance: `predictions[i].faces[j].box`, labelled with
 * `faces[j].name` where there is one. Null when the answer has no boxes at all.
 */
export function answerBoxes(body: unknown): Box[][] | null {
  const value = parsed(body);
  const predictions = value && typeof value === "object" ? (value as { predictions?: unknown }).predictions : null;
  if (!Array.isArray(predictions)) return null;
  let any = false;
  const out = predictions.map((item) => {
    const faces = item && typeof item === "object" ? (item as { faces?: unknown }).faces : null;
    if (!Array.isArray(faces)) return [];
    any = true;
    return faces
      .filter((f): f is { box: [number, number, number, number]; name?: unknown } => !!f && typeof f === "object" && isBox((f as { box?: unknown }).box))
      .map((f) => ({ x: f.box[0], y: f.box[1], width: f.box[2], height: f.box[3], label: typeof f.name === "string" ? f.name : null }));
  });
  return any ? out : null;
}

/** Boxes for the input image: the final answer's when it has any, else the first step's that has. */
export function runBoxes(finalBody: unknown, stepResponses: unknown[]): Box[][] | null {
  const fromFinal = answerBoxes(finalBody);
  if (fromFinal) return fromFinal;
  for (const body of stepResponses) {
    const boxes = answerBoxes(body);
    if (boxes) return boxes;
  }
  return null;
}

/** Base64 of bytes, in chunks (a large file would overflow String.fromCharCode's arguments). */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Why a file cannot be sent as an image, or null when it can. */
export function imageFileProblem(file: { name: string; size: number; type: string }): string | null {
  if (file.type && !file.type.startsWith("image/")) return `${file.name} is not an image (${file.type}).`;
  if (file.size > MAX_IMAGE_FILE_BYTES) {
    return `${file.name} is ${(file.size / 1_000_000).toFixed(1)} MB; the Run panel takes images up to ${MAX_IMAGE_FILE_BYTES / 1_000_000} MB (the request cap is 2 MiB, and base64 adds a third).`;
  }
  return null;
}

/**
 * Why a file's bytes are no image the Run panel can show, or null when they are one. Read from the
 * first bytes, as imageSource reads them (a name or a type can lie: "notes.jpg" may hold text).
 */
export function imageBytesProblem(name: string, bytes: Uint8Array): string | null {
  // 12 bytes are exactly 16 base64 characters: the same prefixes imageSource looks for.
  const head = toBase64(bytes.subarray(0, 12));
  return MAGIC.some(([prefix]) => head.startsWith(prefix)) ? null : `${name} is not an image: its bytes are not JPEG, PNG, GIF, WebP or BMP.`;
}

/** The v1 request that sends an image file's bytes. */
export function imagePayload(bytes: Uint8Array): string {
  return JSON.stringify({ instances: [{ image: { b64: toBase64(bytes) } }] }, null, 2);
}

/** Does this graph take images? Its payload or one of its samples has an `image` field. */
export function takesImages(payload: string, samples: { payload: string }[]): boolean {
  const hasImage = (text: string) => /"image"\s*:/.test(text);
  return hasImage(payload) || samples.some((s) => hasImage(s.payload));
}
