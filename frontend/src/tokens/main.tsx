import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { readConfig } from "../api";
import "../styles/base.css";
import "../styles/list.css";
import "../styles/environments.css";
import "../styles/tokens.css";
import { TokensApp } from "./TokensApp";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <TokensApp config={readConfig()} />
    </StrictMode>,
  );
}
