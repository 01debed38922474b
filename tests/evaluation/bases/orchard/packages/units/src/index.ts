export { litresToGallons, gallonsToLitres } from "./volume.js";
export { squareMetres } from "./area.js";
