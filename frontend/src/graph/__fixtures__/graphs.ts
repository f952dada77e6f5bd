/** Graphs the views' tests draw: the demo graphs of execution/devtools/demo.py, as the editor loads them. */
import { fromManifest } from "../manifest";
import type { GraphState, JsonObject } from "../types";

export function graphOf(nodes: JsonObject): GraphState {
  return fromManifest({ apiVersion: "serving.kserve.io/v1alpha1", kind: "InferenceGraph", metadata: { name: "g" }, spec: { nodes } }, null);
}

/** The demo graphs of execution/devtools/demo.py, as the editor loads them. */
export const FACE_RECOGNITION: JsonObject = {
  root: {
    routerType: "Sequence",
    steps: [
      { name: "face-detector", serviceName: "face-detector" },
      { name: "feature-extractor", serviceName: "feature-extractor", data: "$response" },
      { name: "match", nodeName: "match", data: "$response" },
      { name: "result-merger", serviceName: "result-merger", data: "$response" },
    ],
  },
  match: {
    routerType: "Ensemble",
    steps: [
      { name: "db-employees", serviceName: "face-db-employees" },
      { name: "db-visitors", serviceName: "face-db-visitors" },
    ],
  },
};

export const CAT_DOG: JsonObject = {
  root: {
    routerType: "Sequence",
    steps: [
      { name: "cat-dog-classifier", serviceName: "cat-dog-classifier" },
      { name: "breed", serviceName: "dog-breed-classifier", condition: '[@this].#(predictions.0=="dog")' },
    ],
  },
};

export const ANIMAL_SWITCH: JsonObject = {
  root: {
    routerType: "Switch",
    steps: [
      { name: "cat", serviceName: "cat-breed-classifier", condition: 'instances.#(animal=="cat")' },
      { name: "dog", serviceName: "dog-breed-classifier", condition: 'instances.#(animal=="dog")' },
    ],
  },
};

export const CANARY: JsonObject = {
  root: {
    routerType: "Splitter",
    steps: [
      { name: "stable", serviceName: "sentiment-v1", weight: 90 },
      { name: "canary", serviceName: "sentiment-v2", weight: 10 },
    ],
  },
};

