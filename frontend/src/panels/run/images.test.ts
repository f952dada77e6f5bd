import { describe, expect, it } from "vitest";
import { answerBoxes, findImages, imageBytesProblem, imageFileProblem, imagePayload, imageSource, MAX_IMAGE_FILE_BYTES, requestImages, runBoxes, takesImages, toBase64 } from "./images";

const JPEG = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsK";
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";

describe("images in runs", () => {
  it("recognises image values by their bytes, not their names", () => {
    expect(imageSource({ b64: JPEG })).toBe(`data:image/jpeg;base64,${JPEG}`);
    expect(imageSource(PNG)).toBe(`data:image/png;base64,${PNG}`);
    expect(imageSource("data:image/gif;base64,R0lGODlhAQABAAAAACw=")).toBe("data:image/gif;base64,R0lGODlhAQABAAAAACw=");
    expect(imageSource({ b64: "aGVsbG8gd29ybGQsIG5vdCBhbiBpbWFnZQ==" })).toBeNull();
    expect(imageSource("lobby-camera-0001.jpg")).toBeNull();
    expect(imageSource("Qk is a word that starts like a BMP")).toBeNull(); // bare text: BMP only inside b64
    expect(imageSource({ b64: "Qk02AAAAAAAAADYAAAAoAAAA" })).toBe("data:image/bmp;base64,Qk02AAAAAAAAADYAAAAoAAAA");
  });

  it("finds images inside a body with their paths, bounded", () => {
    const body = { predictions: [{ faces: [{ box: [1, 2, 3, 4], crop: { b64: JPEG } }, { crop: { b64: PNG } }] }] };
    expect(findImages(body).map((i) => i.path)).toEqual(["predictions.0.faces.0.crop", "predictions.0.faces.1.crop"]);
    expect(findImages({ a: Array.from({ length: 50 }, () => ({ b64: JPEG })) }, 5)).toHaveLength(5);
    expect(findImages({ text: "hello" })).toEqual([]);
  });

  it("reads the request's images and the answer's boxes with their names", () => {
    expect(requestImages({ instances: [{ image: { b64: JPEG } }, { image: "x.jpg" }] })).toEqual([`data:image/jpeg;base64,${JPEG}`]);
    expect(requestImages(JSON.stringify({ instances: [{ b64: PNG }] }))).toHaveLength(1);
    expect(requestImages({ inputs: [] })).toEqual([]);
    const merged = { predictions: [{ faces: [{ face: 0, box: [177, 66, 95, 95], name: "Eileen Collins" }, { face: 1, box: [1, 2, 3, 4], name: null }] }] };
    expect(answerBoxes(merged)).toEqual([
      [
        { x: 177, y: 66, width: 95, height: 95, label: "Eileen Collins" },
        { x: 1, y: 2, width: 3, height: 4, label: null },
      ],
    ]);
    expect(answerBoxes({ predictions: [{ faces: [] }] })).toEqual([[]]);
    expect(answerBoxes({ predictions: ["cat"] })).toBeNull();
    expect(answerBoxes({ predictions: [{ faces: [{ box: [1, 2, "3", 4] }] }] })).toEqual([[]]);
  });

  it("takes the final answer's boxes, else the first step's that has boxes", () => {
    const detector = JSON.stringify({ predictions: [{ faces: [{ box: [5, 6, 7, 8] }] }] });
    expect(runBoxes({ predictions: ["no boxes"] }, [undefined, "not json", detector])).toEqual([[{ x: 5, y: 6, width: 7, height: 8, label: null }]]);
    expect(runBoxes(null, [])).toBeNull();
  });

  it("makes the v1 payload of a file and refuses what would not fit the request cap", () => {
    const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 1, 2, 250]);
    expect(JSON.parse(imagePayload(bytes))).toEqual({ instances: [{ image: { b64: btoa(String.fromCharCode(...bytes)) } }] });
    const big = new Uint8Array(100_000).map((_, i) => i % 256);
    expect(atob(toBase64(big)).length).toBe(100_000);
    expect(imageFileProblem({ name: "a.jpg", size: 90_000, type: "image/jpeg" })).toBeNull();
    expect(imageFileProblem({ name: "a.txt", size: 10, type: "text/plain" })).toMatch(/not an image/);
    expect(imageFileProblem({ name: "huge.png", size: MAX_IMAGE_FILE_BYTES + 1, type: "image/png" })).toMatch(/up to 1.5 MB/);
    // The largest file that passes still fits 2 MiB once base64 and the JSON around it are added.
    expect(Math.ceil(MAX_IMAGE_FILE_BYTES / 3) * 4 + 64).toBeLessThan(2 * 1024 * 1024);
  });

  it("refuses bytes that are no image, whatever the file's name says", () => {
    expect(imageBytesProblem("a.jpg", new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]))).toBeNull();
    expect(imageBytesProblem("a.png", Uint8Array.from(atob(PNG), (c) => c.charCodeAt(0)))).toBeNull();
    expect(imageBytesProblem("a.gif", new TextEncoder().encode("GIF89a\x01\x00"))).toBeNull();
    expect(imageBytesProblem("notes.jpg", new TextEncoder().encode("not a jpeg at all"))).toMatch(/^notes\.jpg is not an image/);
    expect(imageBytesProblem("empty.png", new Uint8Array())).toMatch(/not an image/);
  });

  it("offers the picker to graphs whose payloads carry an image field", () => {
    expect(takesImages('{"instances": [{"image": "x.jpg"}]}', [])).toBe(true);
    expect(takesImages('{"instances": [{"text": "hi"}]}', [{ payload: '{"instances":[{"image":{"b64":"..."}}]}' }])).toBe(true);
    expect(takesImages('{"instances": [{"text": "hi"}]}', [])).toBe(false);
  });
});
